/**
 * A write's cost by stage, from V8 CPU profiles (`node --cpu-prof`, one file per thread): each sample is
 * charged to the stage of the innermost frame of the project's own code on its stack (so the SQLite statement
 * a read-model commit runs is charged to the projections, the zod parse a route runs to HTTP), or, with no
 * project frame on the stack, to the library or the runtime the sample is in (the garbage collector, the
 * module loader, idle time).
 *
 * Used by `bench:writes --profile DIR`; on its own: `node --import tsx scripts/bench/support/profile-stages.ts DIR`.
 */
import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { url: string; functionName: string };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The stages of a command, in the order it passes them, and what is not a command's at all. */
export const STAGES = [
  'HTTP and validation',
  'authorization and sessions',
  'use case, idempotency, aggregate load',
  'decider',
  'append (log, hashes, commit)',
  'projections folding',
  'outboxes and followers',
  'read-your-writes wait',
  'logging and metrics',
  'audit log tree',
  'other project code',
  'libraries, no project frame',
  'garbage collector',
  'runtime (program, modules)',
] as const;
export type Stage = (typeof STAGES)[number];

/** A project file (path under src/ or projections/, compiled or not) and a function in it, to its stage. */
export function stageOfProjectFile(file: string, functionName = ''): Stage {
  // The log read for the projectors (subscriptions, and noticing other processes' commits) is their folding's;
  // a stream read is a use case's aggregate load.
  if (/^src\/event-store\/.*subscription|^src\/sqlite\/other-connection-commits/.test(file)) return 'projections folding';
  if (/^src\/event-store\//.test(file) && /^(readStream|readStreamBackwards)/.test(functionName)) return 'use case, idempotency, aggregate load';
  const rules: Array<[RegExp, Stage]> = [
    [/^src\/application\/projection-watermark\./, 'read-your-writes wait'],
    [/^src\/(logging|metrics)\//, 'logging and metrics'],
    [/^src\/http\/(request-log|middleware\/request-log|metrics)/, 'logging and metrics'],
    [/^src\/security\/|^src\/http\/(session|auth)|^src\/http\/admin\/(admin-auth|authenticat)|^src\/application\/(key-access|user-access|tenant-project-access|project-settings-access|access-)/, 'authorization and sessions'],
    [/^src\/(http|service)\//, 'HTTP and validation'],
    [/^src\/domain\/.*(decider|decide|entity|policy|rules)/, 'decider'],
    [/^src\/(event-store|sqlite)\//, 'append (log, hashes, commit)'],
    [/^src\/audit\//, 'audit log tree'],
    [/^(projections|src\/projection-engine|src\/read-models|src\/public-content|src\/search)\//, 'projections folding'],
    [/^src\/(webhooks|review-notices|contact-forms|outbox|mail)\//, 'outboxes and followers'],
    [/^src\/(application|snapshots|domain)\//, 'use case, idempotency, aggregate load'],
  ];
  for (const [pattern, stage] of rules) if (pattern.test(file)) return stage;
  return 'other project code';
}

/** A frame's project file (relative to the checkout, `.ts`), or undefined for a library's or the runtime's. */
function projectFileOf(url: string): string | undefined {
  if (!url.startsWith('file://') || url.includes('/node_modules/')) return undefined;
  const match = /\/(?:dist\/)?((?:src|projections)\/.+)\.(?:js|ts)$/.exec(url);
  return match ? `${match[1]}` : undefined;
}

export interface StageTable {
  /** Sampled CPU time per stage, ms (idle time left out). */
  ms: Record<Stage, number>;
  totalMs: number;
  idleMs: number;
  threads: number;
}

export function stagesOfProfiles(dir: string): StageTable {
  const ms = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  let idleMs = 0;
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  for (const file of files) {
    const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    const parent = new Map<number, number>();
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    const stageOf = new Map<number, Stage | 'idle'>();
    const classify = (id: number): Stage | 'idle' => {
      const known = stageOf.get(id);
      if (known) return known;
      const node = byId.get(id)!;
      const name = node.callFrame.functionName;
      let stage: Stage | 'idle';
      if (name === '(idle)') stage = 'idle';
      else if (name === '(garbage collector)') stage = 'garbage collector';
      else {
        stage = 'runtime (program, modules)';
        let library = false;
        for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
          const frame = byId.get(at)!.callFrame;
          const own = projectFileOf(frame.url);
          if (own) {
            stage = stageOfProjectFile(own, frame.functionName);
            library = false;
            break;
          }
          if (frame.url.includes('/node_modules/')) library = true;
        }
        if (library) stage = 'libraries, no project frame';
      }
      stageOf.set(id, stage);
      return stage;
    };
    profile.samples.forEach((id, i) => {
      const stage = classify(id);
      const delta = (profile.timeDeltas[i] ?? 0) / 1000;
      if (stage === 'idle') idleMs += delta;
      else ms[stage] += delta;
    });
  }
  const totalMs = Object.values(ms).reduce((a, b) => a + b, 0);
  return { ms, totalMs, idleMs, threads: files.length };
}

/** The table as lines: stage, ms, share of the busy time, and per command when `commands` is given. */
export function formatStageTable(table: StageTable, commands?: number): string[] {
  const lines = [`stage | CPU ms | share${commands ? ' | ms per command' : ''}`];
  for (const stage of STAGES) {
    const value = table.ms[stage];
    if (value === 0) continue;
    lines.push(`${stage} | ${value.toFixed(0)} | ${((value / table.totalMs) * 100).toFixed(1)}%${commands ? ` | ${(value / commands).toFixed(3)}` : ''}`);
  }
  lines.push(`busy, all ${table.threads} threads | ${table.totalMs.toFixed(0)} | 100%${commands ? ` | ${(table.totalMs / commands).toFixed(3)}` : ''}`);
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: node --import tsx scripts/bench/support/profile-stages.ts DIR_OF_CPUPROFILES [COMMANDS]\n');
    process.exit(2);
  }
  const commands = process.argv[3] ? Number(process.argv[3]) : undefined;
  for (const line of formatStageTable(stagesOfProfiles(dir), commands)) console.log(line);
}
