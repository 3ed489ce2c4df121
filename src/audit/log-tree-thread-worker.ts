/**
 * The follower thread's module (started by ./log-tree-thread.ts): opens the event store and the tree store, runs
 * the LogTreeFollower until told to stop, and reports the tree's growth to the service's thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import type { EventStore } from '../event-store/event-store.ts';
import { SqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { LogTreeFollower } from './log-tree-follower.ts';
import { openLogTreeStore } from './open-log-tree-store.ts';
import { LOG_TREE_THREAD_NICENESS, type LogTreeThreadOptions, type ThreadMessage } from './log-tree-thread.ts';
import { lowerThisThreadPriority } from '../thread-priority.ts';

const data = workerData as { eventStore: LogTreeThreadOptions['eventStore']; tree: LogTreeThreadOptions['tree'] };
const send = (message: ThreadMessage) => parentPort!.postMessage(message);

// The tree is derived from the log and may lag it by a moment: its hashing yields the cores to the threads that
// commit writes and answer requests, and takes every idle cycle (see LOG_TREE_THREAD_NICENESS).
lowerThisThreadPriority(LOG_TREE_THREAD_NICENESS);

let events: EventStore;
// Another thread's appends are seen by polling the file's data version; the follower commits at most every 100 ms
// once caught up, so a check every 25 ms is as good as one every 2 and wakes the thread a twelfth as often.
if (data.eventStore.kind === 'sqlite') events = SqliteEventStore.open(data.eventStore.file, { otherProcessActiveCheckMs: 25, otherProcessCheckMs: 25 });
else {
  const { EventStoreDbEventStore } = await import('../event-store/esdb-event-store.ts');
  events = EventStoreDbEventStore.connect(data.eventStore.connectionString);
}
const tree = await openLogTreeStore(data.tree);
let caughtUp = false;
const follower = new LogTreeFollower({
  events,
  tree,
  // Warnings and errors to stderr, as the service's own log lines.
  logger: pino({ level: 'warn' }, pino.destination(2)),
  onGrow: (size) => send({ grew: size }),
  onUnreadable: (error) => send({ error: error.message }),
});
// The caught-up moment, for the start-up check that waits for the tree to reach a checkpoint's size.
const watch = setInterval(() => {
  if (!caughtUp && follower.caughtUp) {
    caughtUp = true;
    send({ caughtUp: follower.size });
  }
}, 20);
parentPort!.on('message', (message) => {
  if (message === 'stop') void follower.stop();
});
try {
  await follower.run();
} finally {
  clearInterval(watch);
  await events.close();
  await tree.close();
  parentPort!.close();
}
