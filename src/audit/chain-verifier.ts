/**
 * `annals audit verify`: recomputes every stream's hash chain (./../event-store/hash-chain.ts) over the whole
 * log, in one pass in log order, and checks every signed anchor over the events written before chains
 * (./legacy-anchor.ts). It reads the store's events as stored (never upcast) and holds one link per stream.
 *
 * A break names the stream, the revision and the event id where the recomputed chain first disagrees with
 * the stored one; the walk then goes on from the stored link, so an event altered in place is named alone
 * and the events after it still verify. What a break means:
 * - link-mismatch: the event's content (id, type, version, data, metadata) or what precedes it in the
 *   stream changed after it was written;
 * - revision-gap: revisions are missing before this event (events removed from the middle of a stream);
 * - anchor-digest / anchor-signature: the events an anchor covers are not the ones it signed, or its
 *   signature does not verify with an audit key valid at its `anchoredAt`;
 * - unreadable: the store holds the event but cannot read it back (the embedded log: its stored frame is
 *   damaged, which its checksum shows); the walk goes on after it, and the stream's next event is checked
 *   against its own stored link (what the unreadable event held cannot be recomputed).
 * Events without a link are not breaks: those written before chains are covered by an anchor, those written
 * since the log's Merkle tree superseded chains (src/audit/log-tree-follower.ts) by its signed checkpoints, which
 * `annals audit verify --against` checks in the same pass (onLeaf). What a chain cannot show (events removed from
 * the end of a stream, a whole stream removed, links recomputed) a checkpoint published earlier does.
 */
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { UnreadableEventError } from '../event-store/errors.ts';
import { encodePosition } from '../event-store/position.ts';
import { chainedContent, genesisLink, linkOfContent, storedLink } from '../event-store/hash-chain.ts';
import { eventLeafHash } from './log-leaf.ts';
import type { AuditPublicKeyInfo } from './audit-keys.ts';
import { AuditSignatureError, verifyAuditJws } from './audit-signer.ts';
import { auditLogAnchored, type AuditLogAnchored } from './audit-events.ts';
import { LegacyDigest } from './legacy-anchor.ts';

export type BreakReason = 'link-mismatch' | 'revision-gap' | 'anchor-digest' | 'anchor-signature' | 'unreadable';

export interface ChainBreak {
  reason: BreakReason;
  streamId: string;
  revision: string;
  eventId: string;
  type: string;
  position: string;
  detail: string;
}

export interface VerifyReport {
  verified: boolean;
  /** Events whose chain was recomputed (in the project's streams with --project). */
  chainedEvents: number;
  /** Events without a link (written before chains), all of them whatever the project. */
  unlinkedEvents: number;
  streams: number;
  anchors: Array<{ eventId: string; position: string; coveredEvents: number; valid: boolean }>;
  /** The first breaks in log order (at most maxBreaks), the first one first. */
  breaks: ChainBreak[];
  /** More breaks were found than are listed. */
  moreBreaks: boolean;
  firstBreak: ChainBreak | null;
  projectId: string | null;
  durationMs: number;
  eventsPerSecond: number;
}

export interface VerifyOptions {
  /** Only the chains of streams whose first event belongs to this project (anchors are always checked). */
  projectId?: string | undefined;
  /** Every audit key with its validity (the ring's publicKeys()); null: anchors cannot be checked (each is then a break). */
  keys: readonly AuditPublicKeyInfo[] | null;
  maxBreaks?: number;
  onProgress?: (progress: { events: number; fraction: number }) => void;
  /**
   * Given every event's leaf hash in the log's Merkle tree (./log-leaf.ts), in log order, computed from the same
   * canonical text as its link; null for an event the store cannot read. For the tree check of the same pass.
   */
  onLeaf?: (hash: Uint8Array | null, event: Pick<RecordedEvent, 'streamId' | 'revision' | 'position'> & { id: string; metadata?: RecordedEvent['metadata'] }) => void;
  /** Told of every event in log order (an unreadable one without metadata), for checks of the same pass that need no leaf. */
  onEvent?: (event: Pick<RecordedEvent, 'streamId' | 'revision' | 'position'> & { id: string; metadata?: RecordedEvent['metadata'] }) => void;
}

interface StreamTip {
  revision: bigint;
  /** null: the event at `revision` could not be read, so the next one starts from its own stored link. */
  link: string | null;
  inScope: boolean;
  chained: boolean;
}

/** The log in order; an event the store cannot read is handed to `unreadable` and the read goes on after it. */
async function* readAllReporting(store: EventStore, unreadable: (error: UnreadableEventError) => void): AsyncIterable<RecordedEvent> {
  let after: bigint | 'start' = 'start';
  for (;;) {
    try {
      for await (const event of store.readAll({ after })) {
        after = event.position;
        yield event;
      }
      return;
    } catch (error) {
      if (!(error instanceof UnreadableEventError)) throw error;
      unreadable(error);
      after = error.position;
    }
  }
}

/** Recomputes every chain and checks every anchor; see the module comment. */
export async function verifyLog(store: EventStore, options: VerifyOptions): Promise<VerifyReport> {
  const started = performance.now();
  const head = await store.headPosition();
  const maxBreaks = options.maxBreaks ?? 100;
  const tips = new Map<string, StreamTip>();
  const unlinked = new LegacyDigest();
  const anchors: VerifyReport['anchors'] = [];
  const breaks: ChainBreak[] = [];
  let moreBreaks = false;
  let chainedEvents = 0;
  let unlinkedEvents = 0;
  let seen = 0;
  const fail = (event: Pick<RecordedEvent, 'streamId' | 'revision' | 'id' | 'type' | 'position'>, reason: BreakReason, detail: string) => {
    if (breaks.length >= maxBreaks) {
      moreBreaks = true;
      return;
    }
    breaks.push({ reason, streamId: event.streamId, revision: event.revision.toString(), eventId: event.id, type: event.type, position: encodePosition(event.position), detail });
  };

  for await (const event of readAllReporting(store, (unreadable) => {
    fail({ ...unreadable, id: unreadable.eventId }, 'unreadable', `the stored event cannot be read back: ${unreadable.reason}`);
    options.onLeaf?.(null, { ...unreadable, id: unreadable.eventId });
    options.onEvent?.({ ...unreadable, id: unreadable.eventId });
    const tip = tips.get(unreadable.streamId);
    tips.set(unreadable.streamId, { revision: unreadable.revision, link: null, inScope: tip?.inScope ?? true, chained: tip?.chained ?? true });
  })) {
    if (head !== null && event.position > head) break;
    if (++seen % 10_000 === 0) options.onProgress?.({ events: seen, fraction: head ? Number(event.position) / Number(head) : 1 });
    const tip = tips.get(event.streamId);
    const inScope = tip?.inScope ?? (options.projectId === undefined || event.metadata.projectId === options.projectId);
    const link = storedLink(event.metadata);
    if (options.onLeaf) options.onLeaf(eventLeafHash(event), event);
    options.onEvent?.(event);
    const content = link !== undefined && inScope ? chainedContent(event) : '';

    if (link === undefined) {
      // Written before chains (covered by an anchor) or after the log's Merkle tree superseded them (covered by its
      // checkpoints: verify --against): it still seeds the link of a chained event after it.
      unlinkedEvents += 1;
      const legacy = unlinked.add(event);
      tips.set(event.streamId, { revision: event.revision, link: legacy, inScope, chained: tip?.chained ?? false });
      continue;
    }

    if (!inScope) {
      tips.set(event.streamId, { revision: event.revision, link, inScope, chained: true });
      continue;
    }
    chainedEvents += 1;
    const expectedRevision = tip ? tip.revision + 1n : 0n;
    if (event.revision !== expectedRevision) {
      fail(event, 'revision-gap', tip ? `revision ${event.revision} follows revision ${tip.revision}: events are missing from the stream` : `the stream starts at revision ${event.revision}, not 0: its first events are missing`);
    }
    const prev = tip ? tip.link : genesisLink(event.streamId);
    const computed = prev === null ? link : linkOfContent(prev, content);
    if (computed !== link) fail(event, 'link-mismatch', 'the recomputed link differs from the stored one: the event was changed after it was written, or an event before it was');
    tips.set(event.streamId, { revision: event.revision, link, inScope, chained: true });

    if (event.type === auditLogAnchored.type) {
      const anchor = event.data as AuditLogAnchored;
      const valid = checkAnchor(event, anchor, unlinked, options.keys, fail);
      anchors.push({ eventId: event.id, position: encodePosition(event.position), coveredEvents: anchor.coveredEvents, valid });
      unlinked.reset();
    }
  }
  const durationMs = Math.round(performance.now() - started);
  return {
    verified: breaks.length === 0,
    chainedEvents,
    unlinkedEvents,
    streams: tips.size,
    anchors,
    breaks,
    moreBreaks,
    firstBreak: breaks[0] ?? null,
    projectId: options.projectId ?? null,
    durationMs,
    eventsPerSecond: durationMs > 0 ? Math.round((seen * 1000) / durationMs) : seen,
  };
}

function checkAnchor(event: RecordedEvent, anchor: AuditLogAnchored, unlinked: LegacyDigest, keys: readonly AuditPublicKeyInfo[] | null, fail: (event: RecordedEvent, reason: BreakReason, detail: string) => void): boolean {
  let valid = true;
  if (anchor.coveredEvents !== unlinked.count || anchor.digest !== unlinked.digest()) {
    fail(event, 'anchor-digest', `the anchor covers ${anchor.coveredEvents} events with digest ${anchor.digest}; the log holds ${unlinked.count} unlinked events before it, with digest ${unlinked.digest()}`);
    valid = false;
  }
  if (!keys) {
    fail(event, 'anchor-signature', 'no audit public key to check the anchor\'s signature with');
    return false;
  }
  try {
    const { payload } = verifyAuditJws(anchor.signature, keys, (signed) => signed['anchoredAt']);
    const same = payload['kind'] === 'annals-log-anchor' && payload['coveredEvents'] === anchor.coveredEvents && payload['digest'] === anchor.digest && payload['firstEventId'] === anchor.firstEventId && payload['lastEventId'] === anchor.lastEventId && payload['anchoredAt'] === anchor.anchoredAt;
    if (!same) {
      fail(event, 'anchor-signature', 'the anchor\'s fields differ from what its signature covers');
      valid = false;
    }
  } catch (error) {
    if (!(error instanceof AuditSignatureError)) throw error;
    fail(event, 'anchor-signature', error.message);
    valid = false;
  }
  return valid;
}
