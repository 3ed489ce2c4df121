/**
 * `annals audit diff A B`: whether audit export B (./audit-export.ts) extends export A of the same project, so
 * that an auditor holding A knows B rewrote none of it. Each bundle is checked first: intact (the SHA-256 of its
 * lines is the one its end line names), signed (the JWS by a key valid when it signed), and its checkpoint signed
 * by a key under the log's origin. The keys are the auditor's key list when given (`annals audit public-key
 * --json`, with the keys its last key announced since, as the bundles carry them), else the keys each bundle
 * carries, which shows the bundles are intact and consistent but not who made them (`keys: "bundles"`).
 *
 * Then:
 * - the log: B's checkpoint extends A's. The tree of A's size is a prefix of B's, shown by an RFC 9162 consistency
 *   proof between the two roots (or the same root at the same size). The proof comes from the log tree store
 *   where the command runs beside the service, or from a file (`--consistency`, what this command printed, or
 *   `annals audit proof consistency --json`): it is checked against the two signed roots, so it is trusted for
 *   nothing. Every event either bundle holds is a leaf of its checkpoint's tree, so none of A's events, nor
 *   anything else the log held when A was made, was changed, removed or moved in B's log.
 * - the selections, as the header states them (`selection`, `log.through`): B reads the log at least as far as
 *   A, and either covers A (the same entry; or a period that contains A's) and then holds every event of A
 *   unchanged, at the same leaf, in the same order; or continues A (B's period starts where A's ends), and then
 *   every stream both hold goes on from A's last event (the next revision).
 *
 * Anything else (a gap between the periods, a partial overlap, another entry or project) cannot show B extends A.
 * Exports of version 1, or made before the log had its tree, carry no checkpoint: only their events are compared.
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { configure } from 'safe-stable-stringify';
import type { AuditPublicKeyInfo } from './audit-keys.ts';
import { verifyAuditJws } from './audit-signer.ts';
import { rawOfJwk } from './ed25519.ts';
import { KeyChain } from './key-chain.ts';
import { verifyConsistency } from './merkle-tree.ts';
import { checkpointOfNote } from './log-checkpoints.ts';
import { verifiedSigners } from './signed-note.ts';

const canonical = configure({ bigint: false, deterministic: true, strict: false });

interface ExportEvent {
  streamId: string;
  revision: string;
  id: string;
  type: string;
  data: unknown;
  metadata: unknown;
  prev: string;
  proof?: { leafIndex?: number };
}

interface BundleCheckpoint {
  origin: string;
  size: number;
  rootHash: Uint8Array;
  note: string;
}

type Selection = { kind: 'period'; from: string; to: string } | { kind: 'entry'; entryId: string; streamId?: string };

interface ParsedExport {
  file: string;
  projectId: string;
  selection: Selection;
  through: string | null;
  checkpoint: BundleCheckpoint | null;
  events: ExportEvent[];
  streams: Map<string, { firstRevision: string; lastRevision: string; prev: string; last: string }>;
}

export interface DiffProblem {
  detail: string;
  eventId?: string;
  streamId?: string;
}

/** A consistency proof between the two checkpoints, in the shape `tlog-verifier consistency` reads. */
export interface DiffConsistency {
  fromSize: number;
  toSize: number;
  proof: string[];
  from: { size: number; rootHash: string; note: string };
  to: { size: number; rootHash: string; note: string };
  verified: boolean;
}

export interface ExportSummary {
  file: string;
  projectId: string;
  selection: Selection | null;
  through: string | null;
  checkpointSize: number | null;
  events: number;
}

export interface ExportDiff {
  extends: boolean;
  relation: 'covers' | 'continues' | 'unrelated';
  /** Whose keys the signatures were checked with: the auditor's list, or each bundle's own. */
  keys: 'key list' | 'bundles';
  earlier: ExportSummary;
  later: ExportSummary;
  commonEvents: number;
  newEvents: number;
  consistency: DiffConsistency | null;
  problems: DiffProblem[];
}

export interface DiffOptions {
  /** The auditor's key list (`annals audit public-key --json`, parsed), else the bundles' own keys. */
  keyList?: unknown;
  /** The consistency proof from `fromSize` to `toSize` (base64 hashes), or null when none can be had. */
  consistencyProof?: (fromSize: number, toSize: number) => Promise<string[] | null>;
}

/** The keys a bundle's signatures are checked with: the list's (and those its last key announced in the bundle), or the bundle's. */
function keysFor(header: Record<string, unknown>, list: { chain: KeyChain; origin: string | null } | null, file: string, problems: DiffProblem[]): AuditPublicKeyInfo[] | null {
  let bundleChain: KeyChain | null = null;
  if (header['keyChain'] !== undefined) {
    try {
      bundleChain = KeyChain.verify(header['keyChain'] as unknown[]);
    } catch (error) {
      problems.push({ detail: `${file}: its key chain does not verify: ${(error as Error).message}` });
      return null;
    }
  }
  if (list) {
    if (!bundleChain || !list.chain.isPrefixOf(bundleChain)) {
      if (bundleChain && !bundleChain.isPrefixOf(list.chain)) problems.push({ detail: `${file}: its key chain is not a continuation of your key list: the key chain was forked` });
      return list.chain.publicKeys();
    }
    return bundleChain.publicKeys();
  }
  if (bundleChain) return bundleChain.publicKeys();
  // A bundle of version 1 carries its one key.
  return [{ keyId: String(header['keyId']), publicKey: rawOfJwk(header['publicKey']), validFrom: '0000-01-01T00:00:00.000Z', validUntil: null }];
}

async function readExport(file: string, list: { chain: KeyChain; origin: string | null } | null, problems: DiffProblem[]): Promise<ParsedExport | null> {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter((line) => line !== '');
  const hash = createHash('sha256');
  let header: Record<string, unknown> | undefined;
  let end: Record<string, unknown> | undefined;
  const events: ExportEvent[] = [];
  const streams: ParsedExport['streams'] = new Map();
  for (const [i, text] of lines.entries()) {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      problems.push({ detail: `${file} line ${i + 1} is not JSON` });
      return null;
    }
    if (line['kind'] === 'end') {
      end = line;
      break;
    }
    hash.update(`${text}\n`);
    if (line['kind'] === 'header') header = line;
    else if (line['kind'] === 'event') events.push(line as unknown as ExportEvent);
    else if (line['kind'] === 'stream') streams.set(line['streamId'] as string, line as unknown as { firstRevision: string; lastRevision: string; prev: string; last: string });
  }
  if (header?.['format'] !== 'annals-audit-export' || !end) {
    problems.push({ detail: `${file} is not a complete annals audit export` });
    return null;
  }
  const digest = `sha256:${hash.digest('hex')}`;
  if (end['digest'] !== digest) {
    problems.push({ detail: `${file} was changed after it was signed: its lines hash to ${digest}, its end line names ${String(end['digest'])}` });
    return null;
  }
  const keys = keysFor(header, list, file, problems);
  if (!keys) return null;
  const selection: Selection = (header['selection'] as Selection | undefined) ?? { kind: 'period', from: String(header['from']), to: String(header['to']) };
  const log = (header['log'] ?? {}) as { through?: string | null; checkpoint?: { note?: unknown; signedAt?: unknown } | null };
  try {
    const { payload } = verifyAuditJws(String(end['signature']), keys, (signed) => signed['signedAt'] ?? signed['exportedAt']);
    if (payload['digest'] !== digest || payload['projectId'] !== header['projectId'] || canonical(payload['selection'] ?? null) !== canonical(header['selection'] ?? null) || payload['from'] !== header['from'] || payload['to'] !== header['to']) {
      throw new Error('the signature covers another bundle');
    }
  } catch (error) {
    problems.push({ detail: `${file}: its signature does not verify: ${(error as Error).message}` });
    return null;
  }
  let checkpoint: BundleCheckpoint | null = null;
  if (log.checkpoint) {
    try {
      const note = String(log.checkpoint.note);
      const parsed = checkpointOfNote(note);
      if (list?.origin && parsed.origin !== list.origin) throw new Error(`it is a checkpoint of the log ${parsed.origin}, your key list's log is ${list.origin}`);
      const signedAt = Date.parse(String(log.checkpoint.signedAt));
      const valid = keys.filter((k) => signedAt >= Date.parse(k.validFrom) && (k.validUntil === null || signedAt < Date.parse(k.validUntil)));
      if (verifiedSigners(note, valid.map((k) => ({ name: parsed.origin, publicKey: k.publicKey }))).length === 0) throw new Error(`its signature verifies with no key valid at ${String(log.checkpoint.signedAt)} under the origin ${parsed.origin}`);
      checkpoint = { origin: parsed.origin, size: parsed.size, rootHash: parsed.rootHash, note };
    } catch (error) {
      problems.push({ detail: `${file}: its checkpoint: ${(error as Error).message}` });
      return null;
    }
  }
  return { file, projectId: String(header['projectId']), selection, through: log.through ?? null, checkpoint, events, streams };
}

/** The auditor's key list, verified (its chain from its first key); null without one. */
function keyListOf(keyList: unknown): { chain: KeyChain; origin: string | null } | null {
  if (keyList === undefined) return null;
  const list = keyList as { keyChain?: unknown; origin?: unknown };
  if (!Array.isArray(list.keyChain)) throw new Error('the key list holds no key chain (give the output of annals audit public-key --json)');
  return { chain: KeyChain.verify(list.keyChain), origin: typeof list.origin === 'string' ? list.origin : null };
}

const sameEvent = (a: ExportEvent, b: ExportEvent) =>
  a.id === b.id && a.streamId === b.streamId && a.revision === b.revision && a.type === b.type && canonical(a.data ?? null) === canonical(b.data ?? null) && canonical(a.metadata) === canonical(b.metadata);

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

export async function diffAuditExports(earlierFile: string, laterFile: string, options: DiffOptions = {}): Promise<ExportDiff> {
  const problems: DiffProblem[] = [];
  const list = keyListOf(options.keyList);
  const a = await readExport(earlierFile, list, problems);
  const b = await readExport(laterFile, list, problems);
  const describe = (x: ParsedExport | null, file: string): ExportSummary =>
    x ? { file, projectId: x.projectId, selection: x.selection, through: x.through, checkpointSize: x.checkpoint?.size ?? null, events: x.events.length } : { file, projectId: '', selection: null, through: null, checkpointSize: null, events: 0 };
  const result: ExportDiff = { extends: false, relation: 'unrelated', keys: list ? 'key list' : 'bundles', earlier: describe(a, earlierFile), later: describe(b, laterFile), commonEvents: 0, newEvents: 0, consistency: null, problems };
  if (!a || !b) return result;
  if (a.projectId !== b.projectId) {
    problems.push({ detail: `the exports are of different projects (${a.projectId}, ${b.projectId})` });
    return result;
  }
  if (a.checkpoint && b.checkpoint) result.consistency = await consistencyOf(a.checkpoint, b.checkpoint, options, problems, [earlierFile, laterFile]);
  if (a.through !== null && b.through !== null && b.through < a.through) {
    problems.push({ detail: `${laterFile} read the log to position ${b.through}, before ${earlierFile} (${a.through}): it cannot hold all of it` });
  }
  const relation = relationOf(a.selection, b.selection);
  result.relation = relation;
  if (relation === 'covers') {
    compareCovered(a, b, result);
  } else if (relation === 'continues') {
    compareContinued(a, b, result);
  } else {
    problems.push({ detail: `${laterFile}'s selection (${describeSelection(b.selection)}) neither covers nor continues ${earlierFile}'s (${describeSelection(a.selection)})` });
  }
  result.extends = problems.length === 0;
  return result;
}

function describeSelection(s: Selection): string {
  return s.kind === 'entry' ? `entry ${s.entryId}` : `[${s.from}, ${s.to})`;
}

function relationOf(a: Selection, b: Selection): ExportDiff['relation'] {
  if (a.kind === 'entry' || b.kind === 'entry') return a.kind === 'entry' && b.kind === 'entry' && a.entryId === b.entryId ? 'covers' : 'unrelated';
  const time = (t: string) => Date.parse(t);
  if (time(b.from) <= time(a.from) && time(a.to) <= time(b.to)) return 'covers';
  return time(a.to) === time(b.from) ? 'continues' : 'unrelated';
}

/** B holds every event of A, unchanged, in the same order (at the same leaf, when both carry proofs). */
function compareCovered(a: ParsedExport, b: ParsedExport, result: ExportDiff): void {
  let at = 0;
  for (const event of a.events) {
    while (at < b.events.length && b.events[at]!.id !== event.id) at++;
    const found = b.events[at];
    if (!found) {
      result.problems.push({ detail: `event ${event.id} (${event.streamId} revision ${event.revision}) of ${a.file} is not in ${b.file}, or not in the same order`, eventId: event.id, streamId: event.streamId });
      break;
    }
    const leafA = event.proof?.leafIndex;
    const leafB = found.proof?.leafIndex;
    if (!sameEvent(event, found) || (leafA !== undefined && leafB !== undefined && leafA !== leafB)) {
      result.problems.push({ detail: `event ${event.id} (${event.streamId} revision ${event.revision}) differs between the exports: it was rewritten${leafA !== leafB ? ` or moved (leaf ${leafA}, then ${leafB})` : ''}`, eventId: event.id, streamId: event.streamId });
      break;
    }
    result.commonEvents++;
    at++;
  }
  result.newEvents = b.events.length - result.commonEvents;
}

/** Every stream in both goes on in B from A's last event (the next revision, continuing its link). */
function compareContinued(a: ParsedExport, b: ParsedExport, result: ExportDiff): void {
  const firstInB = new Map<string, ExportEvent>();
  for (const event of b.events) if (!firstInB.has(event.streamId)) firstInB.set(event.streamId, event);
  for (const [streamId, anchors] of a.streams) {
    const next = firstInB.get(streamId);
    if (!next) continue;
    if (BigInt(next.revision) !== BigInt(anchors.lastRevision) + 1n) {
      result.problems.push({ detail: `stream ${streamId}: ${a.file} ends at revision ${anchors.lastRevision}, ${b.file} starts at revision ${next.revision}: events between them are missing`, streamId });
    } else if (next.prev !== anchors.last) {
      result.problems.push({ detail: `stream ${streamId}: ${b.file}'s revision ${next.revision} does not continue from the link ${a.file} ends with: the history before it was rewritten`, streamId, eventId: next.id });
    }
  }
  result.newEvents = b.events.length;
}

/** The consistency proof between the two checkpoints, checked against their signed roots. */
async function consistencyOf(from: BundleCheckpoint, to: BundleCheckpoint, options: DiffOptions, problems: DiffProblem[], [earlierFile, laterFile]: [string, string]): Promise<DiffConsistency | null> {
  if (from.origin !== to.origin) {
    problems.push({ detail: `the exports belong to different logs (${from.origin}, ${to.origin})` });
    return null;
  }
  if (to.size < from.size) {
    problems.push({ detail: `${laterFile}'s checkpoint (size ${to.size}) is older than ${earlierFile}'s (size ${from.size})` });
    return null;
  }
  let proof: string[] | null = [];
  if (to.size > from.size) {
    proof = options.consistencyProof ? await options.consistencyProof(from.size, to.size) : null;
    if (proof === null) {
      problems.push({ detail: `no consistency proof from size ${from.size} to ${to.size}: run this beside the service (its log tree), or give one (--consistency FILE, from annals audit proof consistency --from ${from.size} --to ${to.size} --json)` });
      return null;
    }
  }
  const hashes = proof.map((h) => new Uint8Array(Buffer.from(h, 'base64')));
  const verified = to.size === from.size ? Buffer.from(to.rootHash).equals(Buffer.from(from.rootHash)) : verifyConsistency(from.size, to.size, hashes, from.rootHash, to.rootHash);
  if (!verified) {
    problems.push({ detail: `the log of ${laterFile}'s checkpoint (size ${to.size}) does not extend that of ${earlierFile}'s (size ${from.size}): ${to.size === from.size ? 'the same size with another root' : 'the consistency proof does not verify'}: the log was rewritten between them` });
  }
  const view = (c: BundleCheckpoint) => ({ size: c.size, rootHash: b64(c.rootHash), note: c.note });
  return { fromSize: from.size, toSize: to.size, proof, from: view(from), to: view(to), verified };
}
