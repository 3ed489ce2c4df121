/**
 * Events written before hash chains existed carry no link. They are not rewritten: they are anchored, once,
 * by a signed checkpoint (audit.log-anchored on stream `audit-anchors`): the digest of every unlinked event
 * in log order, signed with the audit key. `annals audit verify` recomputes that digest and checks the
 * signature, so such an event changed afterwards is found like any chained one.
 *
 * The service anchors at start (projector role) when the log's first event has no link and no anchor exists
 * yet: on a log begun by this version nothing is ever anchored. `annals audit anchor` anchors the unlinked
 * events after the last anchor (events an older version still running wrote during an upgrade).
 */
import { createHash, type Hash } from 'node:crypto';
import type { Logger } from 'pino';
import type { EventLog } from '../event-store/event-log.ts';
import { StreamNotFoundError, WrongExpectedVersionError } from '../event-store/errors.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { chainLink, LEGACY_PREV, storedLink } from '../event-store/hash-chain.ts';
import type { AuditSigner } from './audit-signer.ts';
import { AUDIT_ANCHOR_STREAM, auditLogAnchored, type AuditLogAnchored } from './audit-events.ts';

/** The JWS payload of an anchor: what its signature vouches for. */
export interface AnchorPayload {
  kind: 'annals-log-anchor';
  coveredEvents: number;
  digest: string;
  firstEventId: string;
  lastEventId: string;
  anchoredAt: string;
}

/** The running digest of unlinked events, in log order. */
export class LegacyDigest {
  #hash: Hash = createHash('sha256');
  #count = 0;
  #first: string | null = null;
  #last: string | null = null;

  /** Adds an unlinked event; answers its legacy link (what the next event of its stream links to). */
  add(event: RecordedEvent): string {
    const link = chainLink(LEGACY_PREV, event);
    this.#hash.update(`${event.streamId}\t${event.revision}\t${event.id}\t${link}\n`);
    this.#count += 1;
    this.#first ??= event.id;
    this.#last = event.id;
    return link;
  }

  get count(): number {
    return this.#count;
  }

  get firstEventId(): string | null {
    return this.#first;
  }

  get lastEventId(): string | null {
    return this.#last;
  }

  digest(): string {
    return `sha256:${this.#hash.copy().digest('hex')}`;
  }

  /** Starts again (after an anchor: the next one covers the unlinked events after it). */
  reset(): void {
    this.#hash = createHash('sha256');
    this.#count = 0;
    this.#first = null;
    this.#last = null;
  }
}

export type AnchorResult =
  | { anchored: true; coveredEvents: number; digest: string; position: string }
  | { anchored: false; reason: string };

export interface AnchorOptions {
  log: EventLog;
  signer: AuditSigner;
  /**
   * 'once' (service start): anchor only when the log starts with unlinked events and was never anchored,
   * answering at once otherwise. 'after-last': anchor the unlinked events after the last anchor (a scan of
   * the log since it).
   */
  mode: 'once' | 'after-last';
  onProgress?: (events: number) => void;
  signal?: AbortSignal;
}

/** Appends a signed anchor over the unlinked events not yet anchored (see the module comment). */
export async function anchorUnlinkedEvents(options: AnchorOptions): Promise<AnchorResult> {
  const store = options.log.store;
  const anchors = await readAnchors(store);
  const last = anchors[anchors.length - 1];
  if (options.mode === 'once') {
    if (last) return { anchored: false, reason: 'the log was anchored before' };
    let first: RecordedEvent | undefined;
    for await (const event of store.readAll({ maxCount: 1 })) first = event;
    if (!first || storedLink(first.metadata) !== undefined) return { anchored: false, reason: 'every event of the log carries its chain link' };
  }
  const digest = new LegacyDigest();
  let seen = 0;
  for await (const event of store.readAll(last ? { after: last.position } : {})) {
    if (options.signal?.aborted) return { anchored: false, reason: 'stopped' };
    if (storedLink(event.metadata) === undefined) digest.add(event);
    if (++seen % 10_000 === 0) options.onProgress?.(seen);
  }
  if (digest.count === 0) return { anchored: false, reason: 'no unlinked event after the last anchor' };
  // Signed at anchoredAt, which a verifier checks against the key's validity.
  const { jws, payload, keyId } = await options.signer.sign(
    ({ signedAt }): AnchorPayload => ({
      kind: 'annals-log-anchor',
      coveredEvents: digest.count,
      digest: digest.digest(),
      firstEventId: digest.firstEventId!,
      lastEventId: digest.lastEventId!,
      anchoredAt: signedAt,
    }),
  );
  const data: AuditLogAnchored = { ...withoutKind(payload), keyId, signature: jws };
  try {
    const result = await options.log.append(AUDIT_ANCHOR_STREAM, [{ type: auditLogAnchored.type, data }], last ? last.revision : 'no_stream', { actor: { type: 'system', id: 'audit' } });
    return { anchored: true, coveredEvents: digest.count, digest: payload.digest, position: result.position.toString() };
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) return { anchored: false, reason: 'another process anchored the log at the same time' };
    throw error;
  }
}

/** Anchors at start without holding it up, logging what it did; stop() ends a scan under way. */
export function anchorInBackground(options: Omit<AnchorOptions, 'mode' | 'signal'> & { logger: Logger }): { stop(): Promise<void> } {
  const abort = new AbortController();
  const running = anchorUnlinkedEvents({ ...options, mode: 'once', signal: abort.signal }).then(
    (result) => {
      if (result.anchored) options.logger.info({ coveredEvents: result.coveredEvents, digest: result.digest }, 'audit: events written before hash chains anchored by a signed checkpoint');
    },
    (error: unknown) => options.logger.warn({ err: error }, 'audit: anchoring the events written before hash chains failed; run `annals audit anchor`'),
  );
  return {
    async stop() {
      abort.abort();
      await running;
    },
  };
}

/** Every anchor of the log, oldest first. */
export async function readAnchors(store: EventStore): Promise<RecordedEvent[]> {
  const anchors: RecordedEvent[] = [];
  try {
    for await (const event of store.readStream(AUDIT_ANCHOR_STREAM)) if (event.type === auditLogAnchored.type) anchors.push(event);
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
  return anchors;
}

function withoutKind(payload: AnchorPayload): Omit<AnchorPayload, 'kind'> {
  const { kind: _kind, ...rest } = payload;
  return rest;
}
