import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { pino } from 'pino';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { LOG_TREE_THREAD_NICENESS, LogTreeThread } from '../../src/audit/log-tree-thread.ts';
import { SqliteLogTreeStore } from '../../src/audit/sqlite-log-tree-store.ts';
import { LogTreeFollower } from '../../src/audit/log-tree-follower.ts';
import { eventually } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';

/** The niceness of each thread of this process, by thread id, as the kernel reports it (/proc/self/task). */
function threadNiceness(): Map<number, number> {
  const found = new Map<number, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // Fields after the command name, which may hold spaces: state is field 3, nice field 19.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      found.set(Number(tid), Number(fields[16]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return found;
}

const linux = process.platform === 'linux';
const metadata = () => ({ actor: { type: 'system' as const, id: 'test' }, occurredAt: new Date().toISOString(), schemaVersion: 1, correlationId: randomUUID(), causationId: null });

describe('the log tree thread yields the cores to writes (a niceness of its own)', function () {
  if (!linux) {
    it(`runs its thread at niceness ${LOG_TREE_THREAD_NICENESS}, the rest of the process at 0 [pending: threads have a priority of their own on Linux only]`);
    return;
  }
  this.timeout(30_000);

  it('lowerThisThreadPriority sets the calling thread alone, never the process', async () => {
    const before = threadNiceness();
    const module = new URL('../../src/thread-priority.ts', import.meta.url).href;
    const tsx = new URL('../../node_modules/tsx/dist/esm/api/index.mjs', import.meta.url).href;
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
      (async () => {
        (await import(workerData.tsx)).register();
        const { lowerThisThreadPriority, thisThreadId } = await import(workerData.module);
        parentPort.postMessage({ set: lowerThisThreadPriority(7), again: lowerThisThreadPriority(3), tid: thisThreadId() });
        await new Promise((resolve) => parentPort.once('message', resolve));
      })();`,
      { eval: true, workerData: { module, tsx } },
    );
    try {
      const answer = await new Promise<{ set: number; again: number; tid: number }>((resolve) => worker.once('message', resolve));
      // Lowered to 7, and not raised again to 3 (only lowering is allowed without privileges).
      expect(answer).to.include({ set: 7, again: 7 });
      const now = threadNiceness();
      expect(now.get(answer.tid)).to.equal(7);
      expect(before.has(answer.tid)).to.equal(false);
      expect(now.get(process.pid)).to.equal(0);
      for (const [tid, nice] of now) if (tid !== answer.tid) expect(nice, `thread ${tid}`).to.equal(0);
    } finally {
      worker.postMessage('done');
      await worker.terminate();
    }
  });

  it(`follows the log on a thread at niceness ${LOG_TREE_THREAD_NICENESS}, the service's threads staying at 0`, async () => {
    const dir = tempDir();
    const file = path.join(dir, 'events.sqlite');
    const events = SqliteEventStore.open(file);
    for (let i = 0; i < 20; i++) await events.append(`notes-${i}`, [{ id: randomUUID(), type: 'test.noted', data: { i }, metadata: metadata() }], 'no_stream');
    const before = new Set(threadNiceness().keys());
    const thread = new LogTreeThread({ eventStore: { kind: 'sqlite', file }, tree: { kind: 'sqlite', file: path.join(dir, 'log-tree.sqlite') }, logger: pino({ level: 'silent' }) });
    try {
      await eventually(async () => thread.size, (size) => size === 20, 20_000);
      const niced = [...threadNiceness()].filter(([tid]) => !before.has(tid)).filter(([, nice]) => nice === LOG_TREE_THREAD_NICENESS);
      expect(niced, 'the follower thread').to.have.length.of.at.least(1);
      expect(threadNiceness().get(process.pid)).to.equal(0);
    } finally {
      await thread.stop();
      await events.close();
    }
    const tree = SqliteLogTreeStore.open(path.join(dir, 'log-tree.sqlite'));
    expect((await tree.state()).size).to.equal(20);
    await tree.close();
  });
});

describe('the log tree follower commits live leaves at most every liveCommitIntervalMs', function () {
  this.timeout(30_000);

  it('single appends one after another cost the tree a commit per interval, not one each, and every leaf lands', async () => {
    const dir = tempDir();
    const events = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    const store = SqliteLogTreeStore.open(path.join(dir, 'log-tree.sqlite'));
    let commits = 0;
    // The real store, counting its appends.
    const tree = new Proxy(store, {
      get(target, name) {
        const value = Reflect.get(target, name) as unknown;
        if (name === 'append') {
          return (...args: Parameters<SqliteLogTreeStore['append']>) => {
            commits++;
            return target.append(...args);
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const follower = new LogTreeFollower({ events, tree, logger: pino({ level: 'silent' }), liveCommitIntervalMs: 200 });
    const running = follower.run();
    try {
      await events.append('notes-0', [{ id: randomUUID(), type: 'test.noted', data: { i: 0 }, metadata: metadata() }], 'no_stream');
      await eventually(async () => follower.size, (size) => size === 1, 10_000);
      commits = 0;
      const started = performance.now();
      for (let i = 1; i <= 100; i++) await events.append(`notes-${i}`, [{ id: randomUUID(), type: 'test.noted', data: { i }, metadata: metadata() }], 'no_stream');
      const appendMs = performance.now() - started;
      await eventually(async () => follower.size, (size) => size === 101, 10_000);
      const tookMs = performance.now() - started;
      expect(commits, `${commits} commits for 100 appends in ${Math.round(appendMs)} ms, all in the tree after ${Math.round(tookMs)} ms`).to.be.at.most(Math.ceil(tookMs / 200) + 1);
      expect(commits).to.be.at.least(1);
    } finally {
      await follower.stop();
      await running;
    }
    expect((await store.state()).size).to.equal(101);
    await store.close();
    await events.close();
  });
});

describe('the log tree follower at a graceful stop', function () {
  this.timeout(30_000);

  it('takes into the tree every event the log holds, also those its live subscription had not seen yet', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'events.sqlite');
    // The service's writer, and the follower's own connection, which sees the writer's appends only when it polls:
    // here once a minute, so that the appends below are in the log but not yet in the follower's subscription.
    // The writer opens the file by another path (a link to the folder), so that this process's word of its
    // appends (AppendNotifier, by path) does not reach the follower: it is as another process's writer.
    const linked = path.join(tempDir(), 'linked');
    fs.symlinkSync(dir, linked);
    const writer = SqliteEventStore.open(path.join(linked, 'events.sqlite'));
    const append = (i: number) => writer.append(`notes-${i}`, [{ id: randomUUID(), type: 'test.noted', data: { i }, metadata: metadata() }], 'no_stream');
    await append(0);
    const events = SqliteEventStore.open(file, { pollIntervalMs: 60_000, otherProcessCheckMs: 60_000, otherProcessActiveCheckMs: 60_000 });
    const store = SqliteLogTreeStore.open(path.join(dir, 'log-tree.sqlite'));
    const follower = new LogTreeFollower({ events, tree: store, logger: pino({ level: 'silent' }) });
    const running = follower.run();
    await eventually(async () => follower.caughtUp && follower.size, (size) => size === 1, 10_000);
    for (let i = 1; i <= 20; i++) await append(i);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(follower.size, 'the live subscription has not seen the appends yet').to.be.below(21);
    await follower.stop();
    await running;
    expect((await store.state()).size).to.equal(21);
    expect(follower.size).to.equal(21);
    await store.close();
    await events.close();
    await writer.close();
  });
});
