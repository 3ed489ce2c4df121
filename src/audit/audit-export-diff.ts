/**
 * `annals audit diff A B`: whether audit export B (./audit-export.ts) extends export A of the same project, so
 * that an auditor holding A knows B rewrote none of it. Each bundle is checked intact first (the SHA-256 of its
 * lines is the one its end line names, and the signature over it verifies with the key its header carries:
 * who made it is `verify-audit-export.mjs --public-key`'s to establish). Then, by how their ranges relate:
 *
 * - B covers A (B.from <= A.from and A.to <= B.to): every event of A is in B, with the same stream, revision,
 *   id, type, data and metadata, in the same order;
 * - B continues A (A.to = B.from): for every stream in both, B's first event follows A's last one (the next
 *   revision) and its `prev` is the link A's stream line ends with, so nothing between them was removed or
 *   rewritten.
 *
 * Anything else (a gap between the ranges, a partial overlap, another project) cannot show B extends A.
 * When exports carry their checkpoint and inclusion proofs, the same question is answered by a consistency
 * proof between the two checkpoints.
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { configure } from 'safe-stable-stringify';
import { verifyAuditJws } from './audit-signer.ts';
import { rawOfJwk } from './ed25519.ts';

const canonical = configure({ bigint: false, deterministic: true, strict: false });

interface ExportEvent {
  streamId: string;
  revision: string;
  id: string;
  type: string;
  data: unknown;
  metadata: unknown;
  prev: string;
}

interface ParsedExport {
  file: string;
  projectId: string;
  from: string;
  to: string;
  events: ExportEvent[];
  streams: Map<string, { firstRevision: string; lastRevision: string; prev: string; last: string }>;
}

export interface DiffProblem {
  detail: string;
  eventId?: string;
  streamId?: string;
}

export interface ExportDiff {
  extends: boolean;
  relation: 'covers' | 'continues' | 'unrelated';
  earlier: { file: string; projectId: string; from: string; to: string; events: number };
  later: { file: string; projectId: string; from: string; to: string; events: number };
  commonEvents: number;
  newEvents: number;
  problems: DiffProblem[];
}

async function readExport(file: string, problems: DiffProblem[]): Promise<ParsedExport | null> {
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
  if (!header || header['format'] !== 'annals-audit-export' || !end) {
    problems.push({ detail: `${file} is not a complete annals audit export` });
    return null;
  }
  const digest = `sha256:${hash.digest('hex')}`;
  if (end['digest'] !== digest) {
    problems.push({ detail: `${file} was changed after it was signed: its lines hash to ${digest}, its end line names ${String(end['digest'])}` });
    return null;
  }
  try {
    // The bundle's own key: the diff shows B extends A; whether the key is the service's is verify-audit-export's
    // question (with the auditor's key list).
    const key = { keyId: String(header['keyId']), publicKey: rawOfJwk(header['publicKey']), validFrom: '0000-01-01T00:00:00.000Z', validUntil: null };
    const { payload } = verifyAuditJws(String(end['signature']), [key], (signed) => signed['signedAt']);
    if (payload['digest'] !== digest || payload['projectId'] !== header['projectId'] || payload['from'] !== header['from'] || payload['to'] !== header['to']) throw new Error('the signature covers another bundle');
  } catch (error) {
    problems.push({ detail: `${file}: its signature does not verify: ${(error as Error).message}` });
    return null;
  }
  return { file, projectId: String(header['projectId']), from: String(header['from']), to: String(header['to']), events, streams };
}

const sameEvent = (a: ExportEvent, b: ExportEvent) =>
  a.id === b.id && a.streamId === b.streamId && a.revision === b.revision && a.type === b.type && canonical(a.data ?? null) === canonical(b.data ?? null) && canonical(a.metadata) === canonical(b.metadata);

export async function diffAuditExports(earlierFile: string, laterFile: string): Promise<ExportDiff> {
  const problems: DiffProblem[] = [];
  const a = await readExport(earlierFile, problems);
  const b = await readExport(laterFile, problems);
  const describe = (x: ParsedExport | null, file: string) => (x ? { file, projectId: x.projectId, from: x.from, to: x.to, events: x.events.length } : { file, projectId: '', from: '', to: '', events: 0 });
  const result: ExportDiff = { extends: false, relation: 'unrelated', earlier: describe(a, earlierFile), later: describe(b, laterFile), commonEvents: 0, newEvents: 0, problems };
  if (!a || !b) return result;
  if (a.projectId !== b.projectId) {
    problems.push({ detail: `the exports are of different projects (${a.projectId}, ${b.projectId})` });
    return result;
  }
  const time = (t: string) => Date.parse(t);
  if (time(b.from) <= time(a.from) && time(a.to) <= time(b.to)) {
    result.relation = 'covers';
    let at = 0;
    for (const event of a.events) {
      while (at < b.events.length && b.events[at]!.id !== event.id) at++;
      const found = b.events[at];
      if (!found) {
        problems.push({ detail: `event ${event.id} (${event.streamId} revision ${event.revision}) of ${earlierFile} is not in ${laterFile}, or not in the same order`, eventId: event.id, streamId: event.streamId });
        break;
      }
      if (!sameEvent(event, found)) {
        problems.push({ detail: `event ${event.id} (${event.streamId} revision ${event.revision}) differs between the exports: it was rewritten`, eventId: event.id, streamId: event.streamId });
        break;
      }
      result.commonEvents++;
      at++;
    }
    result.newEvents = b.events.length - result.commonEvents;
  } else if (time(a.to) === time(b.from)) {
    result.relation = 'continues';
    const firstInB = new Map<string, ExportEvent>();
    for (const event of b.events) if (!firstInB.has(event.streamId)) firstInB.set(event.streamId, event);
    for (const [streamId, anchors] of a.streams) {
      const next = firstInB.get(streamId);
      if (!next) continue;
      if (BigInt(next.revision) !== BigInt(anchors.lastRevision) + 1n) {
        problems.push({ detail: `stream ${streamId}: ${earlierFile} ends at revision ${anchors.lastRevision}, ${laterFile} starts at revision ${next.revision}: events between them are missing`, streamId });
      } else if (next.prev !== anchors.last) {
        problems.push({ detail: `stream ${streamId}: ${laterFile}'s revision ${next.revision} does not continue from the link ${earlierFile} ends with: the history before it was rewritten`, streamId, eventId: next.id });
      }
    }
    result.newEvents = b.events.length;
  } else {
    problems.push({ detail: `${laterFile}'s range [${b.from}, ${b.to}) neither covers nor continues ${earlierFile}'s [${a.from}, ${a.to})` });
  }
  result.extends = problems.length === 0;
  return result;
}
