/**
 * The tamper-evident log: every event appended through the EventLog carries, in its metadata under
 * `chain`, a link of a hash chain per stream. Pure functions, no I/O; the same on every event store,
 * because the link is computed over the event as the port presents it (never over an adapter's bytes).
 *
 *   link(event) = hex(SHA-256( prev + "\n" + canonical([id, type, schemaVersion, data, metadata without chain]) ))
 *
 * - `prev` is the link of the stream's previous event; for a stream's first event it is the stream's
 *   genesis, hex(SHA-256("annals-chain/v1 genesis\n" + streamId)), which binds the chain to its stream;
 * - an event written before chains existed (no `chain` in its metadata) stands in for its link with its
 *   legacy link: the same formula with `prev` = LEGACY_PREV, so the first chained event after it links to
 *   its content. Such events are covered by a signed anchor instead (src/audit/legacy-anchor.ts);
 * - canonical is RFC 8785-style canonical JSON (keys sorted by UTF-16 code units, no whitespace, numbers
 *   and strings as JSON.stringify writes them): the same data gives the same bytes however it was stored
 *   or read back (key order, a server that rewrites metadata keys).
 *
 * Data is hashed as stored: ciphertext for sealed personal data (so crypto-shredding a submission leaves
 * its chain intact), never the upcast shape. The standalone verifier for auditors
 * (scripts/audit/verify-audit-export.mjs) implements the same formula without importing this module.
 */
import { createHash } from 'node:crypto';
import { configure } from 'safe-stable-stringify';
import type { EventMetadata } from './event-store.ts';

/** The metadata key holding an event's link. */
export const CHAIN_KEY = 'chain';

/** What a legacy event (written before chains) stands in for `prev` when its own link is computed. */
export const LEGACY_PREV = '0'.repeat(64);

/** RFC 8785-style canonical JSON (see the module comment); also the canonical metadata of the log's tree leaves. */
export const canonicalJson = configure({ bigint: false, circularValue: Error, deterministic: true, strict: false });

/** The parts of an event its link covers. */
export interface ChainedContent {
  id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata | Record<string, unknown>;
}

/** The chain's first `prev` for a stream. */
export function genesisLink(streamId: string): string {
  return createHash('sha256').update(`annals-chain/v1 genesis\n${streamId}`).digest('hex');
}

/** The link of an event whose predecessor's link (or the genesis) is `prev`. */
export function chainLink(prev: string, event: ChainedContent): string {
  return linkOfContent(prev, chainedContent(event));
}

/**
 * The canonical text a link covers: canonical([id, type, schemaVersion, data, metadata without chain]). The
 * log's Merkle tree covers the same text (src/audit/log-leaf.ts), so one canonicalisation serves both.
 */
export function chainedContent(event: ChainedContent): string {
  const { [CHAIN_KEY]: _link, ...metadata } = event.metadata as Record<string, unknown>;
  const schemaVersion = typeof metadata['schemaVersion'] === 'number' ? metadata['schemaVersion'] : null;
  return canonicalJson([event.id, event.type, schemaVersion, event.data ?? null, metadata]);
}

/** The link over a chainedContent text continuing from `prev`. */
export function linkOfContent(prev: string, content: string): string {
  return createHash('sha256').update(`${prev}\n${content}`).digest('hex');
}

/** The link an event stores, or undefined for an event written before chains. */
export function storedLink(metadata: EventMetadata | Record<string, unknown>): string | undefined {
  const value = (metadata as Record<string, unknown>)[CHAIN_KEY];
  return typeof value === 'string' ? value : undefined;
}

/** What the next event of a stream links to after `event`: its stored link, or its legacy link. */
export function linkAfter(event: ChainedContent): string {
  return storedLink(event.metadata) ?? chainLink(LEGACY_PREV, event);
}
