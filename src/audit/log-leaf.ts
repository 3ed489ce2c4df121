/**
 * What the log's Merkle tree hashes for each event (its leaf bytes), in log order. Pure; the same on every event
 * store, because it is computed from the event as the port presents it (never from an adapter's bytes):
 *
 *   annals-log-leaf/v1 "\n"
 *   JSON(streamId) "\n"
 *   revision (decimal) "\n"
 *   JSON(id) "\n"
 *   JSON(type) "\n"
 *   canonical(metadata) "\n"          RFC 8785-style: keys sorted by UTF-16 code units, no whitespace
 *   JSON(data)                        as JSON.stringify writes the event's data (null when it has none)
 *
 * The metadata is canonical because stores keep it differently (EventStoreDB moves the correlation ids under
 * its own names, so its keys come back in another order); the data is written as JSON.stringify writes it, which
 * is the text every adapter stores and reads back (key order kept), so on the embedded log a verifier hashes the
 * stored text as it is, without parsing it (./sqlite-leaf-workers.ts). The metadata holds the schema version, the
 * actor, the time and the hash-chain link of events written while links were made, so the leaf binds the stream,
 * the revision, the id, the type, the schema version, the data (as stored: ciphertext for sealed personal data)
 * and every metadata field: moving an event to another stream or revision, editing it, inserting or removing one,
 * or reordering two changes the tree.
 *
 * The tlog verifier (test/peers/tlog-verifier) and docs/audit.md's recipe compute the same bytes on their own.
 */
import { canonicalJson } from '../event-store/hash-chain.ts';
import { storedDataJson, type RecordedEvent } from '../event-store/event-store.ts';
import { leafHash } from './merkle-tree.ts';

export const LEAF_FORMAT = 'annals-log-leaf/v1';

export interface LeafEvent {
  streamId: string;
  revision: bigint | string;
  id: string;
  type: string;
  data: unknown;
  metadata: object;
}

/** The leaf bytes from the event's parts as text: the canonical metadata and the data's JSON. */
export function leafTextOfParts(streamId: string, revision: bigint | string, id: string, type: string, canonicalMetadata: string, dataJson: string): string {
  return `${LEAF_FORMAT}\n${JSON.stringify(streamId)}\n${revision.toString()}\n${JSON.stringify(id)}\n${JSON.stringify(type)}\n${canonicalMetadata}\n${dataJson}`;
}

export function leafText(event: LeafEvent): string {
  // The store's own text of the data when it gives it (the same as JSON.stringify writes: no parse needed).
  const data = storedDataJson(event as RecordedEvent) ?? JSON.stringify(event.data ?? null);
  return leafTextOfParts(event.streamId, event.revision, event.id, event.type, canonicalJson(event.metadata) as string, data);
}

/** The event's leaf hash: SHA-256(0x00 || leaf bytes). */
export function eventLeafHash(event: LeafEvent): Uint8Array {
  return leafHash(leafText(event));
}
