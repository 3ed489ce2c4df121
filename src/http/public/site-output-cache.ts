import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { VARY_ENCODING_MIN_BYTES } from './public-http-manners.ts';

export interface CachedOutput {
  body: string;
  /** Strong validator of the body's bytes. */
  etag: string;
  /** The body compressed, made on the first request that accepts each encoding. */
  encoded?: Partial<Record<ContentEncoding, Promise<Buffer>>>;
}

export type ContentEncoding = 'br' | 'gzip';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * The output compressed in `encoding`, once per output (so once per content version): off the event loop,
 * brotli at quality 5 (a 1.6 MB sitemap in tens of milliseconds, smaller than gzip's).
 */
export function encodedOutput(output: CachedOutput, encoding: ContentEncoding): Promise<Buffer> {
  output.encoded ??= {};
  return (output.encoded[encoding] ??=
    encoding === 'br'
      ? brotliAsync(output.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(output.body) } })
      : gzipAsync(output.body));
}

/**
 * When a build counts as slow (see SiteOutputCache), and how long after one the next waits, as a multiple of
 * its time. A build of 10 ms (a sitemap of a few thousand URLs) redone for each of 20 publishes a second would
 * take a fifth of a core; a 10,000-entry sitemap takes ~50 ms, a 90,000-entry one ~500 ms.
 */
export const SLOW_BUILD_MS = 10;
export const SLOW_BUILD_REST_FACTOR = 3;
/** The least time between background builds of one output: a 45 ms sitemap would otherwise be built seven times a second. */
export const MIN_BUILD_REST_MS = 1000;

/** How long after a slow build of `tookMs` the next background build of the same output may start. */
export function restAfter(tookMs: number): number {
  return Math.max(tookMs * SLOW_BUILD_REST_FACTOR, MIN_BUILD_REST_MS);
}

interface Family {
  /** The last output built, the content version it was built from, and the number of the build that made it. */
  latest?: { version: string; output: CachedOutput | undefined; build: number };
  /** The build under way (one at a time per family). */
  building?: { version: string; promise: Promise<CachedOutput | undefined> };
  /** The version asked for last, to build once the rest after a slow build is over. */
  wanted?: { version: string; build: () => Promise<string | undefined> };
  /** The encodings its outputs are sent in (made before a background build's output is served). */
  encodings: readonly ContentEncoding[];
  /** When the last build finished and how long it took (ms, on the cache's clock). */
  lastBuild?: { finishedAt: number; tookMs: number };
  /** Builds in a row that took SLOW_BUILD_MS or more. */
  slowBuilds: number;
  /** Cancels the build scheduled for when the rest is over. */
  cancelTimer?: () => void;
}

/**
 * Built sitemaps and llms.txt, one output per family (the same document for the same request: a form set's
 * sitemap part on one base URL) with the content version it was built from; least recently used families
 * first out. A process-local cache: every API replica builds its own.
 *
 * Each version is built once: requests for a version being built wait for that build. While a family's
 * builds are quick (under SLOW_BUILD_MS), every request gets the version it asks for. A slow one (the
 * sitemap of tens of thousands of entries) under a steady stream of publishes would be rebuilt for nearly
 * every request, each waiting for it, and take whole cores: once its last two builds were slow, a request for a
 * newer version gets the last output built at once (with that output's ETag), and the version asked for
 * last is built in the background, one build at a time, starting at the earliest SLOW_BUILD_REST_FACTOR
 * times the last build's time after it finished, and never sooner than MIN_BUILD_REST_MS (restAfter). Such
 * an output is behind the read model by about five build times or a little over a second, whichever is
 * more, and its builds take at most a quarter of one core however fast the content changes.
 */
export class SiteOutputCache {
  readonly #families = new Map<string, Family>();
  #bytes = 0;
  #builds = 0;

  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  readonly #onBuildFailed: (error: unknown) => void;
  readonly #schedule: (run: () => void, ms: number) => () => void;

  constructor(
    options: {
      maxEntries?: number;
      maxBytes?: number;
      /** Milliseconds on a monotonic clock (injectable for tests). */
      now?: () => number;
      /** Told when a background build fails (the last output built is served meanwhile, and the build is tried again). */
      onBuildFailed?: (error: unknown) => void;
      /** Runs `run` after `ms` (injectable for tests); returns how to cancel it. Default: an unref'd timer. */
      schedule?: (run: () => void, ms: number) => () => void;
    } = {},
  ) {
    this.#maxEntries = options.maxEntries ?? 256;
    this.#maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    this.#now = options.now ?? (() => performance.now());
    this.#onBuildFailed = options.onBuildFailed ?? (() => {});
    this.#schedule =
      options.schedule ??
      ((run, ms) => {
        const timer = setTimeout(run, ms);
        timer.unref();
        return () => clearTimeout(timer);
      });
  }

  /**
   * The output of `family` at `version` (see above). `encodings`: the compressed forms the family's outputs
   * are sent in (encodedOutput), made in a background build before its output is served, so that no request
   * waits for them either.
   */
  async get(family: string, version: string, build: () => Promise<string | undefined>, options: { encodings?: readonly ContentEncoding[] } = {}): Promise<CachedOutput | undefined> {
    let entry = this.#families.get(family);
    if (entry) {
      // Most recently used last.
      this.#families.delete(family);
      this.#families.set(family, entry);
    } else {
      entry = { slowBuilds: 0, encodings: options.encodings ?? [] };
      this.#families.set(family, entry);
    }
    if (entry.latest?.version === version) return entry.latest.output;
    if (entry.building?.version === version) return entry.building.promise;
    // Two slow builds in a row: one alone may be a cold start's (code not compiled yet, files not cached).
    const slow = entry.latest !== undefined && entry.slowBuilds >= 2;
    // A quick build of the version asked for, even beside another one: the answer is always current.
    if (!slow) return this.#build(family, entry, version, build);
    entry.wanted = { version, build };
    this.#buildWantedWhenRested(family, entry);
    return entry.latest!.output;
  }

  /** Builds the version asked for last, now if the rest after the last build is over, else when it is. */
  #buildWantedWhenRested(family: string, entry: Family): void {
    if (entry.building || entry.cancelTimer || !entry.wanted) return;
    const { finishedAt, tookMs } = entry.lastBuild!;
    const wait = finishedAt + restAfter(tookMs) - this.#now();
    const start = () => {
      entry.cancelTimer = undefined;
      const wanted = entry.wanted;
      if (!wanted || this.#families.get(family) !== entry) return;
      entry.wanted = undefined;
      if (entry.latest?.version === wanted.version) return;
      this.#build(family, entry, wanted.version, wanted.build, true).catch((error: unknown) => {
        try {
          this.#onBuildFailed(error);
        } catch {
          // Telling failed too (a logger closed by shutdown, whose stores the build was reading): nothing is owed to anyone.
        }
      });
    };
    if (wait <= 0) start();
    else entry.cancelTimer = this.#schedule(start, wait);
  }

  #build(family: string, entry: Family, version: string, build: () => Promise<string | undefined>, inBackground = false): Promise<CachedOutput | undefined> {
    const started = this.#now();
    const number = ++this.#builds;
    const promise = build()
      .then(async (body) => {
        const output = body === undefined ? undefined : { body, etag: createHash('sha1').update(body).digest('base64url') };
        if (inBackground && output && Buffer.byteLength(output.body) >= VARY_ENCODING_MIN_BYTES) await Promise.all(entry.encodings.map((encoding) => encodedOutput(output, encoding)));
        const finishedAt = this.#now();
        entry.lastBuild = { finishedAt, tookMs: finishedAt - started };
        entry.slowBuilds = entry.lastBuild.tookMs >= SLOW_BUILD_MS ? entry.slowBuilds + 1 : 0;
        // Builds may finish out of order: an older one never replaces a newer one's output.
        if (this.#families.get(family) === entry && (entry.latest?.build ?? 0) < number) this.#store(entry, { version, output, build: number });
        return output;
      })
      .finally(() => {
        if (entry.building?.promise === promise) entry.building = undefined;
        // A newer version asked for while this one was built.
        if (this.#families.get(family) === entry) this.#buildWantedWhenRested(family, entry);
      });
    entry.building = { version, promise };
    return promise;
  }

  #store(entry: Family, latest: NonNullable<Family['latest']>): void {
    const size = latest.output?.body.length ?? 0;
    if (size > this.#maxBytes) return;
    this.#bytes += size - (entry.latest?.output?.body.length ?? 0);
    entry.latest = latest;
    for (const [oldest, value] of this.#families) {
      if (this.#families.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      if (value === entry) continue;
      this.#families.delete(oldest);
      value.cancelTimer?.();
      this.#bytes -= value.latest?.output?.body.length ?? 0;
    }
  }
}
