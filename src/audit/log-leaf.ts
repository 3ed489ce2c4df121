/**
 * What the log's Merkle tree hashes for each event (its leaf bytes), in log order. Pure; the same on every
 * event store, because it is computed from the event as the port presents it (never from an adapter's bytes):
 *
 *   annals-log-leaf/v1 "\n"
 *   JSON(streamId) "\n"
 *   revision (decimal) "\n"
 *   the event's hash-chain link (64 hex digits), or nothing for an event without one "\n"
 *   canonical([id, type, schemaVersion, data, metadata without chain])
 *
 * The last line is the text a hash-chain link covers (src/event-store/hash-chain.ts: RFC 8785-style canonical
 * JSON, keys sorted by UTF-16 code units, no whitespace, numbers and strings as JavaScript's JSON writes them),
 * so the leaf binds the stream, the revision, the id, the type, the schema version, the data (as stored:
 * ciphertext for sealed personal data) and every metadata field: moving an event to another stream or
 * revision, editing it, inserting or removing one, or reordering two changes the tree.
 *
 * The tlog verifier (test/peers/tlog-verifier) and docs/audit.md's recipe compute the same bytes on their own.
 */
import { chainedContent, storedLink, type ChainedContent } from '../event-store/hash-chain.ts';
import { leafHash } from './merkle-tree.ts';

export const LEAF_FORMAT = 'annals-log-leaf/v1';

export interface LeafEvent extends ChainedContent {
  streamId: string;
  revision: bigint | string;
}

/** The leaf bytes, given the event's chainedContent text (computed once when the chain is checked too). */
export function leafTextOf(event: Omit<LeafEvent, 'data' | 'id' | 'type'>, content: string): string {
  return `${LEAF_FORMAT}\n${JSON.stringify(event.streamId)}\n${event.revision.toString()}\n${storedLink(event.metadata) ?? ''}\n${content}`;
}

export function leafText(event: LeafEvent): string {
  return leafTextOf(event, chainedContent(event));
}

/** The event's leaf hash: SHA-256(0x00 || leaf bytes). */
export function eventLeafHash(event: LeafEvent): Uint8Array {
  return leafHash(leafText(event));
}
