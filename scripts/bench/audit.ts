/**
 * What the tamper-evident log costs and how fast it is checked, on the embedded default (SQLite), with
 * realistic ~1 KB events (test/support/synthetic-history.ts).
 *
 *   npm run bench:audit -- [--rounds 5] [--singles 300] [--batched 20000] [--verify-events 1000000] [--json]
 *
 * 1. Appends with and without the hash chain, interleaved round by round (the order alternates) so that a
 *    shared machine's load falls on both alike:
 *    - chained: the EventLog as it is (each event's link computed; the predecessor's link remembered);
 *    - pre-chain: the EventLog's append as it was before chains (validate, stamp, store.append), copied here;
 *    each for single-event appends with an exact expected revision on existing streams (a command: one
 *    durable commit each) and for batches of 100 events to new streams. Ratios chained / pre-chain.
 * 2. `annals audit verify` on a log of `--verify-events` chained events (entries of 10 events, appended the
 *    way the EventLog links them), run as the operator runs it (the compiled CLI, `npm run build` first): wall
 *    time and events/s; beside it the baseline of merely reading the whole log through the port in the same run.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { systemClock } from '../../src/clock.ts';
import { EventCatalog, defineEvent } from '../../src/event-store/event-catalog.ts';
import { EventLog, type PendingEvent } from '../../src/event-store/event-log.ts';
import type { EventMetadata, EventStore, ExpectedRevision, NewEvent } from '../../src/event-store/event-store.ts';
import { CHAIN_KEY, chainLink, genesisLink } from '../../src/event-store/hash-chain.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import { revisionEvent } from '../../test/support/synthetic-history.ts';
import { median } from './support/percentile.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    singles: { type: 'string', default: '300' },
    batched: { type: 'string', default: '20000' },
    'verify-events': { type: 'string', default: '1000000' },
    json: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const singles = Number(values.singles);
const batched = Number(values.batched);
const verifyEvents = Number(values['verify-events']);
const say = (line: string) => process.stderr.write(`${line}\n`);
const perSecond = (n: number, ms: number) => Math.round((n * 1000) / ms);

const benchEvent = defineEvent({ type: 'bench.revision-saved', version: 1, schema: z.record(z.string(), z.unknown()) });
const catalog = new EventCatalog([benchEvent]);
const actor = { type: 'user' as const, id: 'bench' };
const pending = (entry: number, revision: number): PendingEvent => ({ type: benchEvent.type, data: revisionEvent(entry, revision).data });

/** The EventLog's append before hash chains (main before this change): validate, stamp, append. */
class PreChainLog {
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
  append(streamId: string, events: readonly PendingEvent[], expected: ExpectedRevision, context?: unknown): Promise<{ nextExpectedRevision: bigint }>;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-audit-'));
try {
  // ---- 1. appends, chained and pre-chain, interleaved
  const variants = ['chained', 'pre-chain'] as const;
  const stores = Object.fromEntries(variants.map((v) => [v, SqliteEventStore.open(path.join(dir, `${v}.sqlite`))])) as Record<(typeof variants)[number], SqliteEventStore>;
  const appenders: Record<(typeof variants)[number], Appender> = {
    chained: { append: (s, e, x) => chainedLog.append(s, e, x, { actor }) },
    'pre-chain': new PreChainLog(stores['pre-chain']),
  };
  const chainedLog = new EventLog(stores.chained, catalog, systemClock);
  const figures: Record<string, { single: number[]; batched: number[] }> = { chained: { single: [], batched: [] }, 'pre-chain': { single: [], batched: [] } };
  const revisions: Record<string, bigint[]> = {};
  for (const variant of variants) {
    // 50 existing streams that the single appends continue, as commands on existing entries do.
    revisions[variant] = [];
    for (let s = 0; s < 50; s++) revisions[variant]![s] = (await appenders[variant].append(`entry-existing-${s}`, [pending(s, 0)], 'no_stream')).nextExpectedRevision;
  }
  let nextEntry = 1000;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? variants : ([...variants].reverse() as typeof variants[number][]);
    for (const variant of order) {
      const appender = appenders[variant];
      let t = performance.now();
      for (let i = 0; i < singles; i++) {
        const s = i % 50;
        revisions[variant]![s] = (await appender.append(`entry-existing-${s}`, [pending(s, i + 1)], revisions[variant]![s]!)).nextExpectedRevision;
      }
      figures[variant]!.single.push(perSecond(singles, performance.now() - t));
      t = performance.now();
      for (let written = 0; written < batched; written += 100) {
        const entry = nextEntry++;
        await appender.append(`entry-${variant}-${entry}`, Array.from({ length: 100 }, (_, i) => pending(entry, i)), 'no_stream');
      }
      figures[variant]!.batched.push(perSecond(batched, performance.now() - t));
    }
    say(`round ${round + 1}/${rounds}: single ${figures['chained']!.single.at(-1)} vs ${figures['pre-chain']!.single.at(-1)} events/s; batched ${figures['chained']!.batched.at(-1)} vs ${figures['pre-chain']!.batched.at(-1)} events/s (chained vs pre-chain)`);
  }
  for (const store of Object.values(stores)) await store.close();
  const ratio = (kind: 'single' | 'batched') => {
    const perRound = figures['chained']![kind].map((c, i) => c / figures['pre-chain']![kind][i]!);
    return { chained: median(figures['chained']![kind]), preChain: median(figures['pre-chain']![kind]), ratioMedian: Number(median(perRound).toFixed(2)), ratios: perRound.map((r) => Number(r.toFixed(2))) };
  };
  const append = { rounds, singlesPerRound: singles, batchedPerRound: batched, single: ratio('single'), batched: ratio('batched') };
  say(`append, single events (exact revision, durable commit each): chained ${append.single.chained}/s, pre-chain ${append.single.preChain}/s, ratio ${append.single.ratioMedian} (per round ${append.single.ratios.join(', ')})`);
  say(`append, batches of 100 to new streams: chained ${append.batched.chained}/s, pre-chain ${append.batched.preChain}/s, ratio ${append.batched.ratioMedian} (per round ${append.batched.ratios.join(', ')})`);

  // ---- 2. verify a large chained log with the operator command
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir, { mode: 0o700 });
  const store = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
  let t = performance.now();
  for (let entry = 0, written = 0; written < verifyEvents; entry++) {
    const n = Math.min(10, verifyEvents - written);
    let prev = genesisLink(`entry-${entry}`);
    const events: NewEvent[] = Array.from({ length: n }, (_, i) => {
      const raw = revisionEvent(entry, i);
      const metadata = raw.metadata as EventMetadata;
      const link = chainLink(prev, { ...raw, metadata });
      prev = link;
      return { ...raw, metadata: { ...metadata, [CHAIN_KEY]: link } };
    });
    await store.append(`entry-${entry}`, events, 'no_stream');
    written += n;
    if (entry % 5000 === 0) process.stderr.write(`\r  writing ${written.toLocaleString('en')} / ${verifyEvents.toLocaleString('en')} chained events`);
  }
  process.stderr.write('\n');
  say(`wrote ${verifyEvents.toLocaleString('en')} chained events in ${((performance.now() - t) / 1000).toFixed(1)} s (${fs.statSync(path.join(dataDir, 'events.sqlite')).size.toLocaleString('en')} bytes)`);
  t = performance.now();
  let read = 0;
  for await (const _ of store.readAll()) read++;
  const readAllMs = performance.now() - t;
  await store.close();
  say(`readAll baseline: ${perSecond(read, readAllMs).toLocaleString('en')} events/s (${(readAllMs / 1000).toFixed(1)} s)`);
  t = performance.now();
  const run = spawnSync(process.execPath, [path.join(PACKAGE_ROOT, 'bin/annals.mjs'), 'audit', 'verify', '--json'], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallMs = performance.now() - t;
  if (run.status !== 0) throw new Error(`annals audit verify exited ${run.status}: ${run.stderr}`);
  const report = JSON.parse(run.stdout) as { verified: boolean; chainedEvents: number; streams: number; eventsPerSecond: number; durationMs?: number };
  const verify = {
    events: verifyEvents,
    verified: report.verified,
    streams: report.streams,
    wallSeconds: Number((wallMs / 1000).toFixed(1)),
    eventsPerSecondWall: perSecond(verifyEvents, wallMs),
    eventsPerSecondReported: report.eventsPerSecond,
    readAllEventsPerSecond: perSecond(read, readAllMs),
  };
  say(`annals audit verify: ${verify.verified ? 'verified' : 'BROKEN'} ${verifyEvents.toLocaleString('en')} events in ${verify.streams.toLocaleString('en')} streams: wall ${verify.wallSeconds} s (process start included), ${verify.eventsPerSecondWall.toLocaleString('en')} events/s; the command's own figure ${verify.eventsPerSecondReported.toLocaleString('en')} events/s; ratio to readAll ${(verify.eventsPerSecondReported / verify.readAllEventsPerSecond).toFixed(2)}`);
  if (values.json) process.stdout.write(`${JSON.stringify({ cpus: os.cpus().length, append, verify }, null, 2)}\n`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
