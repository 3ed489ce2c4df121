/**
 * `annals audit export` (and GET /admin/v1/audit/exports/...): a project's events as an NDJSON bundle an
 * auditor verifies without the service (scripts/audit/verify-audit-export.mjs, Node only; docs/audit.md).
 * Which events (the selection): a period (every event of the project with from <= occurredAt < to) or one
 * entry's whole history (its stream), each read from the log up to its head when the export begins. Lines, in
 * this order (format version 2):
 *
 *   {"kind":"header","format":"annals-audit-export","version":2,"projectId","tenantId","selection","from"?,"to"?,"log":{"through","checkpoint"},"actors":"referenced","redacted","exportedAt","chain":"annals-chain/v1","keyId","publicKey":{JWK},"keyChain":[announcements]}
 *   {"kind":"event","position","streamId","revision","id","type","data","metadata","prev","flag"?,"proof"}   the selection's events, in log order
 *   {"kind":"actor",  ...the same fields...}                                                  the actors' events (below), in log order
 *   {"kind":"stream","streamId","firstRevision","lastRevision","prev","last"}                 one per stream: its chain anchors
 *   {"kind":"end","events","actorEvents","streams","digest":"sha256:...","signature":"<compact JWS>"}
 *
 * - `selection` is {kind: "period", from, to} (also repeated as the header's `from` and `to`, as in version 1)
 *   or {kind: "entry", entryId, streamId}. `log.through` is the log position the export read to: the bundle
 *   holds every event of the selection at or before it, and none after. Two exports of one selection compare
 *   by it: the later one's `through` is at or after the earlier one's, and holds its events unchanged.
 * - `log.checkpoint` is the signed checkpoint of the log's Merkle tree (C2SP tlog-checkpoint: {size, rootHash,
 *   note, signedAt}) the export belongs to: `through` is the position of its last leaf, so its tree covers every
 *   event of the bundle. Each event and actor line carries `proof`: {leafIndex, hashes}, the RFC 9162 inclusion
 *   path of its event in that tree (base64 hashes from the leaf up). A verifier recomputes the leaf from the line
 *   (./log-leaf.ts), the root from the path, and checks the checkpoint's signature with the audit keys: what the
 *   line says is then what the log every holder of that checkpoint (a witness, the published folder) saw. A
 *   redacted line's leaf cannot be recomputed: its proof carries the leaf's hash (`leafHash`), which shows an
 *   event is at that place in the log, the line's content being bound by the bundle's signature only.
 *   Before a line is written, its event is checked against the tree (its leaf hash recomputed from the log):
 *   an export of a log that differs from its tree fails rather than carry proofs that do not verify.
 * - The actors: the people and keys the selection's events name (who acted: metadata.actor; whom an entry was
 *   assigned to), the issuer of each such agent key, and for each the events that say who they are and what
 *   they could do up to the end of the selection (a period's `to`, else `through`), from before it too:
 *   user.created (e-mail, first role), user.role-changed, user.disabled; agent-key.issued (scope, name, issued
 *   by its event's actor) and agent-key.revoked. An actor event that is also in the selection is written once,
 *   as an event line.
 * - `redacted`: what the bundle leaves out of events, by event type: a user's password hash (scrypt), which is
 *   no auditor's business and would let anyone holding the bundle guess at passwords offline. Such a line says
 *   which fields it replaced (`redacted`: ["data.passwordHash"], value "[redacted]"): its link cannot be
 *   recomputed from the line, and is taken from its metadata as signed; the chain is checked to continue
 *   through it. Personal data sealed in the log (contact-form submissions) stays sealed, as stored.
 * - `prev` is the link the event's chain continues from (the previous event's link, the stream's genesis, or
 *   a legacy link for an event written before chains); `metadata.chain` is its own link. The script
 *   recomputes every link from `prev` and the event, and checks that consecutive events of a stream link up.
 * - `digest` is the SHA-256 of every line before the end line, bytes as written (each with its "\n"); the
 *   signature is a compact JWS (EdDSA, Ed25519, `kid` the key id) over {format, version, projectId, selection,
 *   from?, to?, through, exportedAt, events, actorEvents, streams, digest, keyId, signedAt}: editing, adding,
 *   removing or reordering any line breaks it. `signedAt` is when it was signed, which must fall inside the
 *   key's validity.
 * - `keyChain` is the audit key chain (./key-chain.ts) up to the signing key: an auditor who holds an older
 *   key list sees the signing key announced by a key they trust (scripts/audit/verify-audit-export.mjs).
 *   The key that signs is chosen when the export begins; a rotation that retires it before the end fails
 *   the export (run it again) rather than sign with a retired key.
 * - `flag` (./audit-flags.ts), beside an event and not part of it: what the audit log flags of the event (an
 *   approval made while a rule of the usual approval policy was off, a refused write, a publication the policy
 *   refused), derived from the event's own data; covered by the signature like every line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { notFound } from '../domain/domain-error.ts';
import { projectStream, projectKeysStream, userStream } from '../domain/access/access-streams.ts';
import { entryStream } from '../domain/content/entry/entry-events.ts';
import { StreamNotFoundError } from '../event-store/errors.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { encodePosition } from '../event-store/position.ts';
import { genesisLink, linkAfter } from '../event-store/hash-chain.ts';
import { auditFlagOf } from './audit-flags.ts';
import { AuditKeyRetiredError } from './audit-keys.ts';
import { signCompactJws } from './audit-signer.ts';
import type { OpenedAuditKeyRing } from './chained-audit-key-ring.ts';
import { jwkOf } from './ed25519.ts';
import { eventLeafHash } from './log-leaf.ts';
import { inclusionPaths } from './log-proofs.ts';
import { treeRoot } from './log-checkpoints.ts';
import type { LogTreeStore, StoredCheckpoint } from './log-tree-store.ts';

export const AUDIT_EXPORT_FORMAT = 'annals-audit-export';
export const AUDIT_EXPORT_VERSION = 2;

/** Which events an export holds: a period of the project, or one entry's whole history. */
export type AuditExportSelection = { kind: 'period'; from: string; to: string } | { kind: 'entry'; entryId: string };

/**
 * Where the export's checkpoint and proofs come from: the log tree store, and, where this process signs
 * checkpoints, a way to sign one of the tree as it is now.
 */
export interface AuditExportTree {
  tree: LogTreeStore;
  /**
   * Signs a checkpoint of the tree as it is now (a process with the projector role; the CLI first brings the tree
   * up to the log); null: none can be signed now.
   */
  sign?: () => Promise<StoredCheckpoint | null>;
  /** How long to wait for a checkpoint (or, with `sign`, a tree) that covers the log's head when the export begins (default 10 s). */
  waitMs?: number;
}

/** What a running service exports with: the ring that signs bundles, and the tree their proofs come from. */
export interface AuditExportSigning {
  ring(): Promise<OpenedAuditKeyRing>;
  log: AuditExportTree;
}

/** No checkpoint covers the log yet, or the log differs from its tree: the export cannot carry proofs that verify. */
export class AuditExportUnavailableError extends Error {
  override name = 'AuditExportUnavailableError';
}

export interface AuditExportOptions {
  projectId: string;
  /** A period: from inclusive, to exclusive, UTC ISO 8601. */
  selection: AuditExportSelection;
  file: string;
  now: () => Date;
  onProgress?: (progress: { events: number; fraction: number }) => void;
}

export interface AuditExportSummary {
  file: string;
  projectId: string;
  selection: AuditExportSelection & { streamId?: string };
  /** The log position the export read to: the last leaf of its checkpoint. */
  through: string | null;
  /** The size of the checkpoint the export belongs to. */
  checkpointSize: number;
  events: number;
  actorEvents: number;
  streams: number;
  digest: string;
  keyId: string;
}

/** Fields left out of events, by event type: password hashes (see the module's comment). */
export const AUDIT_EXPORT_REDACTED: Readonly<Record<string, readonly string[]>> = {
  'user.created': ['data.passwordHash'],
  'user.password-changed': ['data.passwordHash'],
};
export const REDACTED_VALUE = '[redacted]';

/** The events that say who an actor is and what they could do: the actors section. */
const USER_EVENTS = new Set(['user.created', 'user.role-changed', 'user.disabled']);
const AGENT_KEY_EVENTS = new Set(['agent-key.issued', 'agent-key.revoked']);

/**
 * Writes the bundle (through a temporary file, renamed when complete; mode 0600: it holds the project's
 * content). NOT_FOUND (DomainError) for a project the log does not hold, or an entry not of the project.
 */
export async function exportAudit(store: EventStore, ring: OpenedAuditKeyRing, log: AuditExportTree, options: AuditExportOptions): Promise<AuditExportSummary> {
  const key = ring.current();
  const keyChain = ring.chain().announcements();
  const { checkpoint, lastPosition } = await checkpointCovering(store, log);
  const head = lastPosition;
  const through = head === null ? null : encodePosition(head);
  const upToHead = (event: RecordedEvent) => head !== null && event.position <= head;
  const tenantId = await tenantOf(store, options.projectId, upToHead);
  const selection: AuditExportSummary['selection'] = options.selection.kind === 'entry' ? { ...options.selection, streamId: entryStream(options.selection.entryId) } : options.selection;
  const period = selection.kind === 'period' ? { from: selection.from, to: selection.to } : {};
  const exportedAt = options.now().toISOString();
  const bundle = new BundleWriter(store, log.tree, checkpoint.size, options.file);
  try {
    await bundle.line({
      kind: 'header',
      format: AUDIT_EXPORT_FORMAT,
      version: AUDIT_EXPORT_VERSION,
      projectId: options.projectId,
      tenantId,
      selection,
      ...period,
      log: { through, checkpoint: { size: checkpoint.size, rootHash: Buffer.from(checkpoint.rootHash).toString('base64'), note: checkpoint.note, signedAt: checkpoint.signedAt } },
      actors: 'referenced',
      redacted: AUDIT_EXPORT_REDACTED,
      exportedAt,
      chain: 'annals-chain/v1',
      keyId: key.keyId,
      publicKey: jwkOf(key.publicKey),
      keyChain,
    });
    let until: number;
    if (selection.kind === 'period') {
      until = Date.parse(selection.to);
      await writePeriod(store, bundle, options, selection, head);
    } else {
      until = Number.POSITIVE_INFINITY;
      await writeEntry(store, bundle, options.projectId, selection.entryId, upToHead);
    }
    await bundle.flush();
    const inSpan = (event: RecordedEvent) => upToHead(event) && Date.parse(event.metadata.occurredAt) < until;
    for (const event of await actorEvents(store, options.projectId, bundle.referenced, inSpan)) {
      if (!bundle.has(event.id)) await bundle.event(event, 'actor');
    }
    await bundle.flush();
    const counts = await bundle.streamLines();
    const digest = bundle.digest();
    const signed = { format: AUDIT_EXPORT_FORMAT, version: AUDIT_EXPORT_VERSION, projectId: options.projectId, selection, ...period, through, exportedAt, ...counts, digest, keyId: key.keyId, signedAt: options.now().toISOString() };
    let signature: string;
    try {
      signature = await signCompactJws(key, signed);
    } catch (error) {
      if (error instanceof AuditKeyRetiredError) throw new AuditKeyRetiredError(`the audit key ${key.keyId} was retired while the export ran: export again (${error.message})`);
      throw error;
    }
    await bundle.finish({ kind: 'end', ...counts, digest, signature });
    options.onProgress?.({ events: counts.events + counts.actorEvents, fraction: 1 });
    return { file: options.file, projectId: options.projectId, selection, through, checkpointSize: checkpoint.size, ...counts, digest, keyId: key.keyId };
  } catch (error) {
    await bundle.abandon();
    throw error;
  }
}

/**
 * The checkpoint the export belongs to: one that covers the log's head as the export begins (signed now where
 * this process can sign, else the latest one the projector process signed, waited for), and the position of its
 * last leaf. Its root is recomputed from the tree store, so proofs read from the store verify against it.
 */
async function checkpointCovering(store: EventStore, log: AuditExportTree): Promise<{ checkpoint: StoredCheckpoint; lastPosition: bigint | null }> {
  const head = await store.headPosition();
  const deadline = performance.now() + (log.waitMs ?? 10_000);
  let found: { checkpoint: StoredCheckpoint; lastPosition: bigint | null } | null = null;
  for (;;) {
    const late = performance.now() >= deadline;
    let checkpoint = await log.tree.latestCheckpoint();
    // Signed once the tree has reached the head (or when time is up: then of the tree as it stands).
    if (log.sign && (late || head === null || ((await log.tree.state()).lastPosition ?? -1n) >= head)) checkpoint = (await log.sign()) ?? checkpoint;
    if (checkpoint) {
      const [last] = checkpoint.size > 0 ? await log.tree.leaves(checkpoint.size - 1, 1) : [];
      found = { checkpoint, lastPosition: last?.position ?? null };
      if (head === null || (found.lastPosition ?? -1n) >= head) break;
    }
    if (late) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!found) throw new AuditExportUnavailableError('the log has no signed checkpoint yet (the process with the projector role signs one within a second of a change): try again shortly');
  const root = await treeRoot(log.tree, found.checkpoint.size);
  if (!Buffer.from(root).equals(Buffer.from(found.checkpoint.rootHash))) {
    throw new AuditExportUnavailableError(`the log tree store does not reproduce its checkpoint of size ${found.checkpoint.size}: run annals audit verify --against a published checkpoint`);
  }
  return found;
}

/** Every event of the project whose occurredAt is in the period, read from the whole log once, in log order. */
async function writePeriod(store: EventStore, bundle: BundleWriter, options: AuditExportOptions, period: { from: string; to: string }, head: bigint | null): Promise<void> {
  if (head === null) return;
  const fromMs = Date.parse(period.from);
  const toMs = Date.parse(period.to);
  let seen = 0;
  for await (const event of store.readAll()) {
    if (event.position > head) break;
    if (++seen % 10_000 === 0) options.onProgress?.({ events: seen, fraction: Number(event.position) / Number(head) });
    if (event.metadata.projectId !== options.projectId) continue;
    const at = Date.parse(event.metadata.occurredAt);
    if (at >= fromMs && at < toMs) await bundle.event(event, 'event');
  }
}

/** The entry's whole stream up to the head (its first event says which project it is of). */
async function writeEntry(store: EventStore, bundle: BundleWriter, projectId: string, entryId: string, upToHead: (event: RecordedEvent) => boolean): Promise<void> {
  let first = true;
  for await (const event of readStream(store, entryStream(entryId))) {
    if (!upToHead(event)) break;
    if (first && (event.data as { projectId?: unknown } | null)?.projectId !== projectId) break;
    first = false;
    await bundle.event(event, 'event');
  }
  if (first) throw notFound(`No entry ${entryId} in project ${projectId}.`);
}

/**
 * The actors' events (see the module's comment): the agent keys referenced, from the project's key stream
 * (which names who issued each), then every user referenced or issuing, from their streams; in log order.
 */
async function actorEvents(store: EventStore, projectId: string, referenced: Referenced, inSpan: (event: RecordedEvent) => boolean): Promise<RecordedEvent[]> {
  const found: RecordedEvent[] = [];
  if (referenced.agentKeys.size > 0) {
    for await (const event of readStream(store, projectKeysStream(projectId))) {
      if (!inSpan(event) || !AGENT_KEY_EVENTS.has(event.type) || !referenced.agentKeys.has(String((event.data as { keyId?: unknown }).keyId))) continue;
      found.push(event);
      if (event.type === 'agent-key.issued' && event.metadata.actor.type === 'user') referenced.users.add(event.metadata.actor.id);
    }
  }
  for (const userId of [...referenced.users].sort()) {
    for await (const event of readStream(store, userStream(userId))) {
      if (inSpan(event) && USER_EVENTS.has(event.type)) found.push(event);
    }
  }
  return found.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
}

/** The tenant of the project, from its first event; NOT_FOUND when the log (up to the head) holds no such project. */
async function tenantOf(store: EventStore, projectId: string, upToHead: (event: RecordedEvent) => boolean): Promise<string> {
  for await (const event of readStream(store, projectStream(projectId))) {
    if (upToHead(event) && event.type === 'project.created') return String((event.data as { tenantId: unknown }).tenantId);
    break;
  }
  throw notFound(`No project ${projectId} in the log.`);
}

async function* readStream(store: EventStore, streamId: string): AsyncIterable<RecordedEvent> {
  try {
    yield* store.readStream(streamId);
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
}

interface Referenced {
  users: Set<string>;
  agentKeys: Set<string>;
}

interface StreamAnchors {
  firstRevision: bigint;
  lastRevision: bigint;
  prev: string;
  last: string;
}

/** Event lines waiting for their inclusion proofs, read for many at once. */
const PROOF_BATCH = 256;

/**
 * The bundle being written: its lines hashed as written, each stream's chain anchors, the events written (by
 * id) and the actors they name. Event lines wait in batches for their inclusion proofs (one read of the tree
 * store per batch), then are written in order.
 */
class BundleWriter {
  readonly referenced: Referenced = { users: new Set(), agentKeys: new Set() };
  readonly #store: EventStore;
  readonly #tree: LogTreeStore;
  readonly #treeSize: number;
  #pending: Array<{ event: RecordedEvent; line: Record<string, unknown> }> = [];
  readonly #file: string;
  readonly #temporary: string;
  readonly #out: fs.WriteStream;
  readonly #hash = createHash('sha256');
  readonly #streams = new Map<string, StreamAnchors>();
  readonly #written = new Set<string>();
  #events = 0;
  #actorEvents = 0;

  constructor(store: EventStore, tree: LogTreeStore, treeSize: number, file: string) {
    this.#store = store;
    this.#tree = tree;
    this.#treeSize = treeSize;
    this.#file = file;
    this.#temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
    this.#out = fs.createWriteStream(this.#temporary, { encoding: 'utf8', mode: 0o600 });
  }

  async line(value: unknown): Promise<void> {
    const text = `${JSON.stringify(value)}\n`;
    this.#hash.update(text);
    if (!this.#out.write(text)) await once(this.#out, 'drain');
  }

  has(eventId: string): boolean {
    return this.#written.has(eventId);
  }

  /** An event line (`event`: the selection's; `actor`: the actors'), with the link its chain continues from. */
  async event(event: RecordedEvent, kind: 'event' | 'actor'): Promise<void> {
    const anchors = this.#streams.get(event.streamId);
    const prev = anchors && anchors.lastRevision === event.revision - 1n ? anchors.last : await linkBefore(this.#store, event);
    const last = linkAfter(event);
    this.#streams.set(event.streamId, anchors ? { ...anchors, lastRevision: event.revision, last } : { firstRevision: event.revision, lastRevision: event.revision, prev, last });
    this.#pending.push({ event, line: eventLine(event, kind, prev) });
    if (this.#pending.length >= PROOF_BATCH) await this.flush();
    this.#written.add(event.id);
    if (kind === 'event') {
      this.#events += 1;
      this.#reference(event);
    } else {
      this.#actorEvents += 1;
    }
  }

  /**
   * Writes the waiting event lines, each with the inclusion proof of its event in the checkpoint's tree, after
   * checking the event is the tree's leaf: its leaf hash, recomputed from the event as the log holds it, is the
   * one the tree stores at its place.
   */
  async flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return;
    const found = await this.#tree.leavesOfEvents(batch.map(({ event }) => event.id));
    const leaves = batch.map(({ event }) => {
      const leaf = found.get(event.id);
      if (!leaf || leaf.position !== event.position || leaf.leaf >= this.#treeSize) {
        throw new AuditExportUnavailableError(`event ${event.id} (log position ${encodePosition(event.position)}) is not a leaf of the checkpoint's tree at its position: the log differs from its tree; run annals audit verify --against a published checkpoint`);
      }
      return leaf.leaf;
    });
    const paths = await inclusionPaths(this.#tree, this.#treeSize, leaves);
    for (const [i, { event, line }] of batch.entries()) {
      const { path: hashes, leafHash } = paths[i]!;
      if (!Buffer.from(eventLeafHash(event)).equals(Buffer.from(leafHash))) {
        throw new AuditExportUnavailableError(`event ${event.id} (leaf ${leaves[i]}) does not hash to the leaf the tree holds: the log was changed after its tree was built; run annals audit verify --against a published checkpoint`);
      }
      const b64 = (hash: Uint8Array) => Buffer.from(hash).toString('base64');
      const proof = { leafIndex: leaves[i]!, hashes: hashes.map(b64), ...(line['redacted'] ? { leafHash: b64(leafHash) } : {}) };
      await this.line({ ...line, proof });
    }
  }

  /** One line per stream: its anchors. */
  async streamLines(): Promise<{ events: number; actorEvents: number; streams: number }> {
    for (const [streamId, anchors] of this.#streams) {
      await this.line({ kind: 'stream', streamId, firstRevision: anchors.firstRevision.toString(), lastRevision: anchors.lastRevision.toString(), prev: anchors.prev, last: anchors.last });
    }
    return { events: this.#events, actorEvents: this.#actorEvents, streams: this.#streams.size };
  }

  digest(): string {
    return `sha256:${this.#hash.digest('hex')}`;
  }

  /** The end line (not hashed), then the file renamed into place. */
  async finish(end: unknown): Promise<void> {
    if (!this.#out.write(`${JSON.stringify(end)}\n`)) await once(this.#out, 'drain');
    this.#out.end();
    await once(this.#out, 'finish');
    await fs.promises.rename(this.#temporary, this.#file);
  }

  async abandon(): Promise<void> {
    this.#out.destroy();
    await fs.promises.rm(this.#temporary, { force: true });
  }

  /** The actors an event of the selection names: who acted, and whom an entry was assigned to. */
  #reference(event: RecordedEvent): void {
    const { actor } = event.metadata;
    if (actor.type === 'user') this.referenced.users.add(actor.id);
    if (actor.type === 'agent') this.referenced.agentKeys.add(actor.id);
    const assignee = event.type === 'entry.assigned' ? (event.data as { userId?: unknown }).userId : undefined;
    if (typeof assignee === 'string') this.referenced.users.add(assignee);
  }
}

/**
 * An event's line: the event as stored (sealed values stay sealed), with the link it continues from, less the
 * fields the export leaves out (AUDIT_EXPORT_REDACTED), which it names.
 */
function eventLine(event: RecordedEvent, kind: 'event' | 'actor', prev: string): Record<string, unknown> {
  const redacted = AUDIT_EXPORT_REDACTED[event.type] ?? [];
  let data = event.data;
  const replaced: string[] = [];
  for (const field of redacted) {
    const key = field.slice('data.'.length);
    if (data !== null && typeof data === 'object' && key in data) {
      data = { ...(data as Record<string, unknown>), [key]: REDACTED_VALUE };
      replaced.push(field);
    }
  }
  const flag = auditFlagOf(event.type, event.data);
  return {
    kind,
    position: encodePosition(event.position),
    streamId: event.streamId,
    revision: event.revision.toString(),
    id: event.id,
    type: event.type,
    data,
    metadata: event.metadata,
    prev,
    ...(replaced.length > 0 ? { redacted: replaced } : {}),
    ...(flag ? { flag } : {}),
  };
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
