import { createHash } from 'node:crypto';

export interface CachedOutput {
  body: string;
  /** Strong validator of the body's bytes. */
  etag: string;
}

/**
 * Built sitemaps and llms.txt, kept per key (which names the content version they were built from), least
 * recently used first out. Concurrent requests for the same missing key build it once. A process-local
 * cache: every API replica builds its own, and a new version is a new key, so nothing is ever stale.
 */
export class SiteOutputCache {
  readonly #entries = new Map<string, CachedOutput | undefined>();
  readonly #building = new Map<string, Promise<CachedOutput | undefined>>();
  #bytes = 0;

  constructor(private readonly limits: { maxEntries: number; maxBytes: number } = { maxEntries: 256, maxBytes: 64 * 1024 * 1024 }) {}

  async get(key: string, build: () => Promise<string | undefined>): Promise<CachedOutput | undefined> {
    if (this.#entries.has(key)) {
      const hit = this.#entries.get(key);
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      return hit;
    }
    const pending = this.#building.get(key);
    if (pending) return pending;
    const promise = build()
      .then((body) => {
        const output = body === undefined ? undefined : { body, etag: createHash('sha1').update(body).digest('base64url') };
        this.#store(key, output);
        return output;
      })
      .finally(() => this.#building.delete(key));
    this.#building.set(key, promise);
    return promise;
  }

  #store(key: string, output: CachedOutput | undefined): void {
    const size = output?.body.length ?? 0;
    if (size > this.limits.maxBytes) return;
    this.#entries.set(key, output);
    this.#bytes += size;
    for (const [oldest, value] of this.#entries) {
      if (this.#entries.size <= this.limits.maxEntries && this.#bytes <= this.limits.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= value?.body.length ?? 0;
    }
  }
}
