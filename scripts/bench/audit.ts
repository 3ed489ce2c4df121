/**
 * What the tamper-evident log costs and how fast it is checked, on the embedded default (SQLite), with
 * realistic ~1 KB events (test/support/synthetic-history.ts).
 *
 *   npm run bench:audit -- [--rounds 7] [--singles 2000] [--batched 20000] [--lag-seconds 30] [--verify-events 1000000] [--proofs 2000] [--json]
 *
 * 1. Appends, interleaved round by round (the order rotates) so that a shared machine's load falls on each alike:
 *    - unchained: the EventLog's append before hash chains (validate, stamp, store.append), copied here: the baseline;
 *    - chained: the EventLog with per-stream links (`chains: true`, what the previous version wrote on every append);
 *    - tree: the EventLog as it is (no links), with the log tree's follower on its thread (src/audit/log-tree-thread.ts)
 *      and its checkpoints (signed every second) running in the same process on the same file, as the service runs them;
 *    - control: the baseline again on a file of its own (an A/A ratio: how far the machine alone moves a ratio);
 *    each for single-event appends with an exact expected revision on existing streams (a command: one durable
 *    commit each; 2,000 a round by default: at 300 a round lasted 0.1 s and the fsync's variance set the ratio) and
 *    for batches of 100 events to new streams. Ratios to unchained, per round and their median;
 *    and how far the follower was behind at the end of each tree round.
 * 2. Checkpoint lag: one event appended 20 times a second for `--lag-seconds`, with the follower and checkpoints
 *    running; for each event, the time from its append returning to a signed checkpoint covering it (p50, p99, max).
 * 3. `annals audit verify --against` a checkpoint of a log of `--verify-events` events (entries of 10 events, as the
 *    EventLog appends them), run as the operator runs it (the compiled CLI, `npm run build` first): wall time and
 *    events/s; beside it, in the same run, the baseline of reading the whole log through the port.
 * 4. Inclusion proofs at that size: `--proofs` proofs of random events through LogProofs (what the admin API and the
 *    CLI answer: the event read back from the log, its leaf, the hashes from the stored tree), p50 / p99, after 100
 *    untimed ones (a serving process has the proof path compiled; the first calls compile it).
 */
import { spawnSync } from 'node:child_process';
import { randomUUID, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { z } from 'zod';
import { newEd25519PrivateKey, rawPublicKeyOf } from '../../src/audit/ed25519.ts';
import { systemClock } from '../../src/clock.ts';
import { EventCatalog, defineEvent } from '../../src/event-store/event-catalog.ts';
import { EventLog, type PendingEvent } from '../../src/event-store/event-log.ts';
import type { EventStore, ExpectedRevision, NewEvent } from '../../src/event-store/event-store.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import { LogTreeFollower } from '../../src/audit/log-tree-follower.ts';
import { LogCheckpoints } from '../../src/audit/log-checkpoints.ts';
import { SqliteLogTreeStore } from '../../src/audit/sqlite-log-tree-store.ts';
import { CheckpointFolder } from '../../src/audit/checkpoint-folder.ts';
import { LogProofs } from '../../src/audit/log-proofs.ts';
import { LogTreeThread } from '../../src/audit/log-tree-thread.ts';
import type { AuditKeyRing } from '../../src/audit/audit-keys.ts';
import { revisionEvent } from '../../test/support/synthetic-history.ts';
import { median, percentile } from './support/percentile.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    singles: { type: 'string', default: '2000' },
    batched: { type: 'string', default: '20000' },
    'lag-seconds': { type: 'string', default: '30' },
    'verify-events': { type: 'string', default: '1000000' },
    proofs: { type: 'string', default: '2000' },
    json: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const singles = Number(values.singles);
const batched = Number(values.batched);
const lagSeconds = Number(values['lag-seconds']);
const verifyEvents = Number(values['verify-events']);
const proofCount = Number(values.proofs);
const say = (line: string) => process.stderr.write(`${line}\n`);
const perSecond = (n: number, ms: number) => Math.round((n * 1000) / ms);
const logger = pino({ level: 'silent' });

const benchEvent = defineEvent({ type: 'bench.revision-saved', version: 1, schema: z.record(z.string(), z.unknown()) });
const catalog = new EventCatalog([benchEvent]);
const actor = { type: 'user' as const, id: 'bench' };
const pending = (entry: number, revision: number): PendingEvent => ({ type: benchEvent.type, data: revisionEvent(entry, revision).data });

/** A key ring of one Ed25519 key in memory (the service's comes from its key custody; signing costs the same). */
function memoryRing(): AuditKeyRing {
  const privateKey = newEd25519PrivateKey();
  const raw = rawPublicKeyOf(privateKey);
  const key = { keyId: 'bench', publicKey: raw, sign: async (message: Uint8Array) => new Uint8Array(sign(null, message, privateKey)) };
  return { current: () => key, publicKeys: () => [{ keyId: 'bench', publicKey: raw, validFrom: new Date().toISOString(), validUntil: null }], close: async () => {} };
}

/** The EventLog's append before hash chains: validate, stamp, append. */
class UnchainedLog {
  constructor(readonly store: EventStore) {}
  append(streamId: string, events: readonly PendingEvent[], expected: ExpectedRevision) {
    const occurredAt = systemClock.now().toISOString();
    const correlationId = randomUUID();
    const stamped = events.map((event) => {
      const data = catalog.validate(event.type, event.data);
      return { id: randomUUID(), type: event.type, data, metadata: { actor, correlationId, causationId: null, occurredAt, schemaVersion: catalog.versionOf(event.type) } };
    });
    return this.store.append(streamId, stamped, expected);
  }
}

interface Appender {
  append(streamId: string, events: readonly PendingEvent[], expected: ExpectedRevision): Promise<{ nextExpectedRevision: bigint }>;
}

/** The follower (on its thread) and checkpoints over a log file, as the service runs them. */
function treeOver(file: string, treeFile: string) {
  const tree = SqliteLogTreeStore.open(treeFile);
  const made: Array<{ size: number; at: number }> = [];
  const ring = memoryRing();
  const checkpoints = new LogCheckpoints({ tree, ring: () => ring, origin: 'bench.example/annals', clock: systemClock, logger, onCheckpoint: (c) => made.push({ size: c.size, at: performance.now() }) });
  const follower = new LogTreeThread({ eventStore: { kind: 'sqlite', file }, tree: { kind: 'sqlite', file: treeFile }, logger, onGrow: (size) => checkpoints.grew(size) });
  return {
    tree,
    follower,
    checkpoints,
    made,
    async stop() {
      await follower.stop();
      await checkpoints.stop();
      await tree.close();
    },
  };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-audit-'));
const report: Record<string, unknown> = { cpus: os.cpus().length, loadAverage: os.loadavg().map((n) => Number(n.toFixed(2))) };
try {
  // ---- 1. appends: unchained, chained, tree; interleaved
  // control: unchained again, on a file of its own: the A/A ratio says how far the machine alone moves a ratio.
  const variants = ['unchained', 'chained', 'tree', 'control'] as const;
  type Variant = (typeof variants)[number];
  const stores = Object.fromEntries(variants.map((v) => [v, SqliteEventStore.open(path.join(dir, `${v}.sqlite`))])) as Record<Variant, SqliteEventStore>;
  const treeRun = treeOver(path.join(dir, 'tree.sqlite'), path.join(dir, 'tree-log-tree.sqlite'));
  const chainedLog = new EventLog(stores.chained, catalog, systemClock, { chains: true });
  const treeLog = new EventLog(stores.tree, catalog, systemClock);
  const appenders: Record<Variant, Appender> = {
    unchained: new UnchainedLog(stores.unchained),
    control: new UnchainedLog(stores.control),
    chained: { append: (s, e, x) => chainedLog.append(s, e, x, { actor }) },
    tree: { append: (s, e, x) => treeLog.append(s, e, x, { actor }) },
  };
  const figures = Object.fromEntries(variants.map((v) => [v, { single: [] as number[], batched: [] as number[] }])) as Record<Variant, { single: number[]; batched: number[] }>;
  const behind: number[] = [];
  const revisions: Record<string, bigint[]> = {};
  for (const variant of variants) {
    revisions[variant] = [];
    for (let s = 0; s < 50; s++) revisions[variant]![s] = (await appenders[variant].append(`entry-existing-${s}`, [pending(s, 0)], 'no_stream')).nextExpectedRevision;
  }
  let nextEntry = 1000;
  for (let round = 0; round < rounds; round++) {
    const order = [...variants.slice(round % variants.length), ...variants.slice(0, round % variants.length)];
    for (const variant of order) {
      const appender = appenders[variant];
      let t = performance.now();
      for (let i = 0; i < singles; i++) {
        const s = i % 50;
        revisions[variant]![s] = (await appender.append(`entry-existing-${s}`, [pending(s, i + 1)], revisions[variant]![s]!)).nextExpectedRevision;
      }
      figures[variant].single.push(perSecond(singles, performance.now() - t));
      t = performance.now();
      for (let written = 0; written < batched; written += 100) {
        const entry = nextEntry++;
        await appender.append(`entry-${variant}-${entry}`, Array.from({ length: 100 }, (_, i) => pending(entry, i)), 'no_stream');
      }
      figures[variant].batched.push(perSecond(batched, performance.now() - t));
      if (variant === 'tree') {
        const head = Number(await stores.tree.headPosition());
        behind.push(head - treeRun.follower.size);
        // The next round starts with the tree caught up (its work is counted in the rounds that made it).
        while (treeRun.follower.size < head) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    say(`round ${round + 1}/${rounds}: single ${variants.map((v) => `${v} ${figures[v].single.at(-1)}`).join(', ')} events/s; batched ${variants.map((v) => `${v} ${figures[v].batched.at(-1)}`).join(', ')} events/s; the tree was ${behind.at(-1)} events behind at the round's end`);
  }
  await treeRun.stop();
  for (const store of Object.values(stores)) await store.close();
  const ratio = (variant: Variant, kind: 'single' | 'batched') => {
    const perRound = figures[variant][kind].map((c, i) => c / figures.unchained[kind][i]!);
    return { eventsPerSecond: median(figures[variant][kind]), ratioMedian: Number(median(perRound).toFixed(2)), ratios: perRound.map((r) => Number(r.toFixed(2))) };
  };
  const append = {
    rounds,
    singlesPerRound: singles,
    batchedPerRound: batched,
    unchained: { single: median(figures.unchained.single), batched: median(figures.unchained.batched) },
    chained: { single: ratio('chained', 'single'), batched: ratio('chained', 'batched') },
    tree: { single: ratio('tree', 'single'), batched: ratio('tree', 'batched'), behindAtRoundEnd: behind },
    control: { single: ratio('control', 'single'), batched: ratio('control', 'batched') },
  };
  report['append'] = append;
  say(`append, single events (exact revision, durable commit each): unchained ${append.unchained.single}/s; tree ${append.tree.single.eventsPerSecond}/s, ratio ${append.tree.single.ratioMedian} (${append.tree.single.ratios.join(', ')}); chained ratio ${append.chained.single.ratioMedian}; A/A control ${append.control.single.ratioMedian} (${append.control.single.ratios.join(', ')})`);
  say(`append, batches of 100 to new streams: unchained ${append.unchained.batched}/s; tree ${append.tree.batched.eventsPerSecond}/s, ratio ${append.tree.batched.ratioMedian} (${append.tree.batched.ratios.join(', ')}); chained ratio ${append.chained.batched.ratioMedian}; A/A control ${append.control.batched.ratioMedian} (${append.control.batched.ratios.join(', ')})`);

  // ---- 2. checkpoint lag under 20 appends a second
  {
    const store = SqliteEventStore.open(path.join(dir, 'lag.sqlite'));
    const run = treeOver(path.join(dir, 'lag.sqlite'), path.join(dir, 'lag-log-tree.sqlite'));
    const log = new EventLog(store, catalog, systemClock);
    const appended: number[] = [];
    const started = performance.now();
    for (let i = 0; performance.now() - started < lagSeconds * 1000; i++) {
      const due = started + i * 50;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      await log.append(`entry-lag-${i % 40}`, [pending(i % 40, i)], 'any', { actor });
      appended.push(performance.now());
    }
    while (run.follower.size < appended.length) await new Promise((resolve) => setTimeout(resolve, 10));
    await run.checkpoints.checkpoint();
    const lags = appended.map((at, leaf) => {
      const covering = run.made.find((c) => c.size > leaf && c.at >= at);
      return covering ? covering.at - at : Number.NaN;
    }).filter((ms) => !Number.isNaN(ms));
    await run.stop();
    await store.close();
    const lag = { appends: appended.length, perSecond: 20, checkpoints: run.made.length, p50Ms: Math.round(percentile(lags, 50)), p99Ms: Math.round(percentile(lags, 99)), maxMs: Math.round(percentile(lags, 100)) };
    report['checkpointLag'] = lag;
    say(`checkpoint lag, 20 appends/s for ${lagSeconds} s: ${lag.checkpoints} checkpoints; from an append to a checkpoint covering it p50 ${lag.p50Ms} ms, p99 ${lag.p99Ms} ms, max ${lag.maxMs} ms`);
  }

  // ---- 3. verify a large log against a published checkpoint with the operator command
  const dataDir = path.join(dir, 'data');
  const published = path.join(dir, 'published');
  fs.mkdirSync(dataDir, { mode: 0o700 });
  const store = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
  let t = performance.now();
  for (let entry = 0, written = 0; written < verifyEvents; entry++) {
    const n = Math.min(10, verifyEvents - written);
    const events: NewEvent[] = Array.from({ length: n }, (_, i) => revisionEvent(entry, i));
    await store.append(`entry-${entry}`, events, 'no_stream');
    written += n;
    if (entry % 5000 === 0) process.stderr.write(`\r  writing ${written.toLocaleString('en')} / ${verifyEvents.toLocaleString('en')} events`);
  }
  process.stderr.write('\n');
  say(`wrote ${verifyEvents.toLocaleString('en')} events in ${((performance.now() - t) / 1000).toFixed(1)} s (${fs.statSync(path.join(dataDir, 'events.sqlite')).size.toLocaleString('en')} bytes)`);
  t = performance.now();
  {
    const tree = SqliteLogTreeStore.open(path.join(dataDir, 'log-tree.sqlite'));
    await new LogTreeFollower({ events: store, tree, logger, stopWhenCaughtUp: true }).run();
    const ring = memoryRing();
    const checkpoints = new LogCheckpoints({ tree, ring: () => ring, origin: 'bench.example/annals', clock: systemClock, logger, publishers: [new CheckpointFolder(published, dataDir, logger)] });
    await checkpoints.checkpoint();
    await checkpoints.stop();
    await tree.close();
  }
  const treeMs = performance.now() - t;
  say(`the follower built the tree of ${verifyEvents.toLocaleString('en')} leaves in ${(treeMs / 1000).toFixed(1)} s (${perSecond(verifyEvents, treeMs).toLocaleString('en')} events/s) and a checkpoint was published`);
  t = performance.now();
  let read = 0;
  for await (const _ of store.readAll()) read++;
  const readAllMs = performance.now() - t;
  say(`readAll baseline: ${perSecond(read, readAllMs).toLocaleString('en')} events/s (${(readAllMs / 1000).toFixed(1)} s)`);
  t = performance.now();
  // The verifying process has its own key ring: it checks the checkpoint's signature against it (here: another key).
  const run = spawnSync(process.execPath, [path.join(PACKAGE_ROOT, 'bin/annals.mjs'), 'audit', 'verify', '--against', path.join(published, 'checkpoints.ndjson'), '--json'], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallMs = performance.now() - t;
  const verified = JSON.parse(run.stdout) as { chainsVerified: boolean; tree: { extendsCheckpoint: boolean; logEvents: number }; eventsPerSecond: number; streams: number };
  if (!verified.chainsVerified || !verified.tree.extendsCheckpoint) throw new Error(`annals audit verify found a difference: ${run.stdout.slice(0, 2000)} ${run.stderr}`);
  const verify = {
    events: verifyEvents,
    extendsCheckpoint: verified.tree.extendsCheckpoint,
    streams: verified.streams,
    wallSeconds: Number((wallMs / 1000).toFixed(1)),
    eventsPerSecondWall: perSecond(verifyEvents, wallMs),
    readAllEventsPerSecond: perSecond(read, readAllMs),
    treeBuildSeconds: Number((treeMs / 1000).toFixed(1)),
  };
  report['verify'] = verify;
  say(`annals audit verify --against: the log extends the checkpoint of ${verifyEvents.toLocaleString('en')} events in ${verify.streams.toLocaleString('en')} streams: wall ${verify.wallSeconds} s (process start included), ${verify.eventsPerSecondWall.toLocaleString('en')} events/s; readAll through the port alone ${verify.readAllEventsPerSecond.toLocaleString('en')} events/s`);

  // ---- 4. inclusion proofs at that size
  {
    const tree = SqliteLogTreeStore.open(path.join(dataDir, 'log-tree.sqlite'));
    const proofs = new LogProofs(tree, store);
    const size = (await tree.state()).size;
    const ids: string[] = [];
    for (let i = 0; i < proofCount; i++) ids.push((await tree.leaves(Math.floor(Math.random() * size), 1))[0]!.eventId);
    // Warmed up first, untimed, as a serving process is: the first calls compile the proof path.
    for (let i = 0; i < Math.min(100, ids.length); i++) await proofs.inclusion(ids[ids.length - 1 - i]!);
    const times: number[] = [];
    for (const id of ids) {
      const started = performance.now();
      await proofs.inclusion(id);
      times.push(performance.now() - started);
    }
    const consistency: number[] = [];
    for (let i = 0; i < 50; i++) await proofs.consistency(1 + Math.floor(Math.random() * (size - 1)));
    for (let i = 0; i < Math.min(proofCount, 500); i++) {
      const started = performance.now();
      await proofs.consistency(1 + Math.floor(Math.random() * (size - 1)));
      consistency.push(performance.now() - started);
    }
    await tree.close();
    const proof = { treeSize: size, proofs: proofCount, inclusionP50Ms: Number(percentile(times, 50).toFixed(3)), inclusionP99Ms: Number(percentile(times, 99).toFixed(3)), consistencyP99Ms: Number(percentile(consistency, 99).toFixed(3)) };
    report['proofs'] = proof;
    say(`proofs at ${size.toLocaleString('en')} leaves: inclusion p50 ${proof.inclusionP50Ms} ms, p99 ${proof.inclusionP99Ms} ms (the event read back, its leaf, ${Math.ceil(Math.log2(size))} hashes); consistency p99 ${proof.consistencyP99Ms} ms`);
  }
  await store.close();
  report['loadAverageAfter'] = os.loadavg().map((n) => Number(n.toFixed(2)));
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
