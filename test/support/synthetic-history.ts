import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../../src/event-store/event-store.ts';
import type { EventStore } from '../../src/event-store/event-store.ts';

const SYNTHETIC_PROJECT_ID = '00000000-0000-4000-8000-00000000aaaa';
const SYNTHETIC_FORM_SET_ID = '00000000-0000-4000-8000-00000000bbbb';

/**
 * Realistic history for tests and benchmarks: entry streams receiving revision-sized events (about 1 KB
 * of JSON each) from a handful of actors, appended in batches.
 */
export function revisionEvent(entry: number, revision: number, seed = 0): NewEvent {
  const words = ['annals', 'entry', 'revision', 'snapshot', 'publish', 'review', 'draft', 'form', 'set', 'master', 'locale', 'media'];
  const text = (n: number) => Array.from({ length: n }, (_, i) => words[(entry * 7 + revision * 3 + i + seed) % words.length]).join(' ');
  return {
    id: randomUUID(),
    type: revision === 0 ? 'entry.created' : 'revision.saved',
    data: {
      entryId: `00000000-0000-4000-8000-${String(entry).padStart(12, '0')}`,
      // What every entry.created carries (projections look the entry's form set up by it).
      ...(revision === 0 ? { projectId: SYNTHETIC_PROJECT_ID, formSetId: SYNTHETIC_FORM_SET_ID } : {}),
      revision,
      slug: `entry-${entry}`,
      fields: {
        title: { en: text(6), ja: '日本語のタイトル' },
        summary: { en: text(20) },
        body: { en: text(90) },
        category: 'news',
        tags: ['alpha', 'beta', 'gamma'],
        publishedDate: '2026-11-22',
      },
    },
    metadata: {
      actor: { type: revision % 3 === 0 ? 'agent' : 'user', id: `actor-${(entry + revision) % 5}` },
      correlationId: randomUUID(),
      causationId: null,
      occurredAt: new Date(Date.UTC(2026, 0, 1) + entry * 60_000 + revision * 1000).toISOString(),
      schemaVersion: 1,
    },
  };
}

/**
 * Appends `total` events over `entries` streams, `batch` events per append, the streams taken in turn. With
 * `concurrency` above 1 that many appends are in flight at once (each stream's in order), so that the store
 * commits them in groups, as it does a busy service's: the same events, in another order in the log.
 */
export async function writeHistory(store: EventStore, total: number, options: { entries?: number; batch?: number; concurrency?: number } = {}): Promise<void> {
  const entries = options.entries ?? Math.max(1, Math.floor(total / 20));
  const batchSize = options.batch ?? 10;
  const concurrency = options.concurrency ?? 1;
  const revisions = new Map<number, number>();
  const streamTails = new Map<number, Promise<void>>();
  const inFlight = new Set<Promise<void>>();
  let written = 0;
  let entry = 0;
  while (written < total) {
    const n = Math.min(batchSize, total - written);
    const from = revisions.get(entry) ?? 0;
    const events = Array.from({ length: n }, (_, i) => revisionEvent(entry, from + i));
    const stream = `entry-${entry}`;
    const append = (streamTails.get(entry) ?? Promise.resolve()).then(async () => {
      await store.append(stream, events, from === 0 ? 'no_stream' : BigInt(from - 1));
    });
    streamTails.set(entry, append);
    inFlight.add(append);
    const settled = () => inFlight.delete(append);
    append.then(settled, settled);
    if (inFlight.size >= concurrency) await Promise.race(inFlight);
    revisions.set(entry, from + n);
    written += n;
    entry = (entry + 1) % entries;
  }
  await Promise.all(streamTails.values());
}
