/**
 * `annals audit export`: one project's events of a time range, as an NDJSON bundle an auditor verifies
 * without the service (scripts/audit/verify-audit-export.mjs, Node only). Lines, in this order:
 *
 *   {"kind":"header","format":"annals-audit-export","version":1,"projectId","from","to","exportedAt","chain":"annals-chain/v1","keyId","publicKey":{JWK},"keyChain":[announcements]}
 *   {"kind":"event","position","streamId","revision","id","type","data","metadata","prev","flag"?}   every event of the project with from <= occurredAt < to, in log order
 *   {"kind":"stream","streamId","firstRevision","lastRevision","prev","last"}                 one per stream: its chain anchors
 *   {"kind":"end","events","streams","digest":"sha256:...","signature":"<compact JWS>"}
 *
 * - `prev` is the link the event's chain continues from (the previous event's link, the stream's genesis, or
 *   a legacy link for an event written before chains); `metadata.chain` is its own link. The script
 *   recomputes every link from `prev` and the event, and checks that consecutive events of a stream link up.
 * - Each stream line is the stream's anchors in the bundle: the link it starts from (`prev`) and the link of
 *   its last exported event (`last`), to compare with another export or a later verify.
 * - `digest` is the SHA-256 of every line before the end line, bytes as written (each with its "\n"); the
 *   signature is a compact JWS (EdDSA, Ed25519, `kid` the key id) over {format, version, projectId, from, to,
 *   exportedAt, events, streams, digest, keyId, signedAt}: editing, adding or removing any line breaks it.
 *   `signedAt` is when it was signed, which must fall inside the key's validity.
 * - `keyChain` is the audit key chain (./key-chain.ts) up to the signing key: an auditor who holds an older
 *   key list sees the signing key announced by a key they trust (scripts/audit/verify-audit-export.mjs).
 *   The key that signs is chosen when the export begins; a rotation that retires it before the end fails
 *   the export (run it again) rather than sign with a retired key.
 * Events are as stored: sealed personal data stays sealed (ciphertext is what the chain covers).
 * - `flag` (./audit-flags.ts), beside the event and not part of it: what the audit log flags of the event (an
 *   approval made while a rule of the usual approval policy was off, a refused write, a publication the policy
 *   refused), derived from the event's own data; covered by the signature like every line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { StreamNotFoundError } from '../event-store/errors.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { encodePosition } from '../event-store/position.ts';
import { genesisLink, linkAfter } from '../event-store/hash-chain.ts';
import { auditFlagOf } from './audit-flags.ts';
import { AuditKeyRetiredError } from './audit-keys.ts';
import { signCompactJws } from './audit-signer.ts';
import type { OpenedAuditKeyRing } from './chained-audit-key-ring.ts';
import { jwkOf } from './ed25519.ts';

export const AUDIT_EXPORT_FORMAT = 'annals-audit-export';
export const AUDIT_EXPORT_VERSION = 1;

export interface AuditExportOptions {
  projectId: string;
  /** Inclusive, UTC ISO 8601. */
  from: string;
  /** Exclusive, UTC ISO 8601. */
  to: string;
  file: string;
  now: () => Date;
  onProgress?: (progress: { events: number; fraction: number }) => void;
}

export interface AuditExportSummary {
  file: string;
  projectId: string;
  from: string;
  to: string;
  events: number;
  streams: number;
  digest: string;
  keyId: string;
}

interface StreamAnchors {
  firstRevision: bigint;
  lastRevision: bigint;
  prev: string;
  last: string;
}

/** Writes the bundle (through a temporary file, renamed when complete; mode 0600: it holds the project's content). */
export async function exportAudit(store: EventStore, ring: OpenedAuditKeyRing, options: AuditExportOptions): Promise<AuditExportSummary> {
  const key = ring.current();
  const keyChain = ring.chain().announcements();
  const head = await store.headPosition();
  const fromMs = Date.parse(options.from);
  const toMs = Date.parse(options.to);
  const temporary = path.join(path.dirname(options.file), `.${path.basename(options.file)}.${process.pid}.partial`);
  const out = fs.createWriteStream(temporary, { encoding: 'utf8', mode: 0o600 });
  const hash = createHash('sha256');
  const write = async (line: unknown) => {
    const text = `${JSON.stringify(line)}\n`;
    hash.update(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  const exportedAt = options.now().toISOString();
  const streams = new Map<string, StreamAnchors>();
  let events = 0;
  let seen = 0;
  try {
    await write({ kind: 'header', format: AUDIT_EXPORT_FORMAT, version: AUDIT_EXPORT_VERSION, projectId: options.projectId, from: options.from, to: options.to, exportedAt, chain: 'annals-chain/v1', keyId: key.keyId, publicKey: jwkOf(key.publicKey), keyChain });
    for await (const event of store.readAll()) {
      if (head !== null && event.position > head) break;
      if (++seen % 10_000 === 0) options.onProgress?.({ events: seen, fraction: head ? Number(event.position) / Number(head) : 1 });
      if (event.metadata.projectId !== options.projectId) continue;
      const at = Date.parse(event.metadata.occurredAt);
      if (!(at >= fromMs && at < toMs)) continue;
      const anchors = streams.get(event.streamId);
      const prev = anchors && anchors.lastRevision === event.revision - 1n ? anchors.last : await linkBefore(store, event);
      const last = linkAfter(event);
      streams.set(event.streamId, anchors ? { ...anchors, lastRevision: event.revision, last } : { firstRevision: event.revision, lastRevision: event.revision, prev, last });
      const flag = auditFlagOf(event.type, event.data);
      await write({ kind: 'event', position: encodePosition(event.position), streamId: event.streamId, revision: event.revision.toString(), id: event.id, type: event.type, data: event.data, metadata: event.metadata, prev, ...(flag ? { flag } : {}) });
      events += 1;
    }
    for (const [streamId, anchors] of streams) {
      await write({ kind: 'stream', streamId, firstRevision: anchors.firstRevision.toString(), lastRevision: anchors.lastRevision.toString(), prev: anchors.prev, last: anchors.last });
    }
    const digest = `sha256:${hash.digest('hex')}`;
    const signed = { format: AUDIT_EXPORT_FORMAT, version: AUDIT_EXPORT_VERSION, projectId: options.projectId, from: options.from, to: options.to, exportedAt, events, streams: streams.size, digest, keyId: key.keyId, signedAt: options.now().toISOString() };
    let signature: string;
    try {
      signature = await signCompactJws(key, signed);
    } catch (error) {
      if (error instanceof AuditKeyRetiredError) throw new AuditKeyRetiredError(`the audit key ${key.keyId} was retired while the export ran: export again (${error.message})`);
      throw error;
    }
    const end = `${JSON.stringify({ kind: 'end', events, streams: streams.size, digest, signature })}\n`;
    if (!out.write(end)) await once(out, 'drain');
    out.end();
    await once(out, 'finish');
    await fs.promises.rename(temporary, options.file);
    options.onProgress?.({ events: seen, fraction: 1 });
    return { file: options.file, projectId: options.projectId, from: options.from, to: options.to, events, streams: streams.size, digest, keyId: key.keyId };
  } catch (error) {
    out.destroy();
    await fs.promises.rm(temporary, { force: true });
    throw error;
  }
}

/** The link the event's chain continues from: the genesis, or what its predecessor links to (one read). */
async function linkBefore(store: EventStore, event: RecordedEvent): Promise<string> {
  if (event.revision === 0n) return genesisLink(event.streamId);
  try {
    for await (const previous of store.readStream(event.streamId, { fromRevision: event.revision - 1n, maxCount: 1 })) {
      if (previous.revision === event.revision - 1n) return linkAfter(previous);
    }
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
  return genesisLink(event.streamId);
}
