/**
 * A log of real domain events, made through the admin API of a service on the embedded default: a project,
 * two form sets, entries created, revised, published, renamed, imported and deleted, a form set renamed, a
 * master entity, and the content locales changed (which re-shapes every live entry). What the projections
 * fold in production, cross-document reads included (the live counts of public-content, the review queue,
 * the content and access read models), for tests that fold it again under faults.
 */
import fs from 'node:fs';
import path from 'node:path';
import { adminSession, articleFormSet, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { tempDir } from './temp-dir.ts';

export interface DomainHistory {
  /** The events file (SQLite event store), to copy before use. */
  eventsFile: string;
  /** Its head position (on the embedded store, the number of events in it). */
  events: number;
}

async function ok(f: AdminFixture, method: string, route: string, body?: unknown): Promise<any> {
  const response = await f.call(method, route, body === undefined ? {} : { body });
  if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Writes the history; `entries` per form set (at least 6). */
export async function writeDomainHistory(entries = 8): Promise<DomainHistory> {
  const dataDir = path.join(tempDir(), 'data');
  const f = await startAdminFixture({ dataDir });
  try {
    const formSets: string[] = [];
    for (const slug of ['articles', 'pages']) formSets.push((await ok(f, 'POST', '/form-sets', { ...articleFormSet, slug, name: slug })).id as string);
    for (const formSetId of formSets) {
      for (let i = 0; i < entries; i++) {
        const created = await ok(f, 'POST', `/form-sets/${formSetId}/entries`, { slug: `entry-${i}`, fields: { title: `Entry ${i}`, body: `Body ${i}`, rating: i % 5 } });
        const entryId = created.entry.id as string;
        if (i % 4 !== 3) {
          await ok(f, 'POST', `/revisions/${created.revision.id}/submit`, {});
          await ok(f, 'POST', `/revisions/${created.revision.id}/publish`, { revision: created.revision.revision });
        }
        const saved = await ok(f, 'POST', `/entries/${entryId}/revisions`, { fields: { title: `Entry ${i}, revised`, body: `Body ${i} again`, rating: (i + 1) % 5 } });
        if (i % 2 === 0) {
          await ok(f, 'POST', `/revisions/${saved.id}/submit`, {});
          await ok(f, 'POST', `/revisions/${saved.id}/publish`, { revision: saved.revision });
        }
        if (i % 3 === 1) await ok(f, 'PATCH', `/entries/${entryId}/slug`, { slug: `renamed-${i}` });
        if (i % 5 === 2) await ok(f, 'DELETE', `/entries/${entryId}`);
      }
    }
    await ok(f, 'PUT', `/form-sets/${formSets[0]}`, { ...articleFormSet, name: 'Articles, renamed' });
    const master = await ok(f, 'POST', '/master-entities', { key: 'colour', name: 'Colour', records: [{ value: 'red', labels: { en: 'Red', ja: '赤' } }] });
    await ok(f, 'POST', `/master-entities/${master.id}/records`, { value: 'blue', labels: { en: 'Blue', ja: '青' } });
    const session = await adminSession(f);
    const patched = await f.call('PATCH', '/project/content-locales', { body: { locales: ['en', 'ja', 'fr'], defaultLocale: 'en' }, token: session.token, headers: session.headers });
    if (patched.status !== 200) throw new Error(`content locales: ${patched.status} ${JSON.stringify(patched.body)}`);
    const head = await f.service.stores.events.headPosition();
    if (head !== null) await f.service.supervisor!.waitFor(head, 30_000);
  } finally {
    await f.stop();
  }
  const eventsFile = path.join(tempDir(), 'events.sqlite');
  for (const suffix of ['', '-wal']) {
    if (fs.existsSync(path.join(dataDir, `events.sqlite${suffix}`))) fs.copyFileSync(path.join(dataDir, `events.sqlite${suffix}`), `${eventsFile}${suffix}`);
  }
  const { SqliteEventStore } = await import('../../src/event-store/sqlite-event-store.ts');
  const store = SqliteEventStore.open(eventsFile);
  let events = 0;
  try {
    events = Number((await store.headPosition()) ?? 0n);
  } finally {
    await store.close();
  }
  return { eventsFile, events };
}
