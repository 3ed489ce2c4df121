import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { ScheduledPublisher } from '../../src/application/scheduled-publisher.ts';
import { eventually } from '../support/engine-fixture.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { ManualClock } from '../../src/clock.ts';
import { dumpReadModels } from '../support/dump-read-models.ts';
import { documentedResponses } from '../support/openapi-responses.ts';
import { reviewQueue } from '../../projections/review-queue.ts';
import { SqliteSnapshotStore } from '../../src/snapshots/sqlite-snapshot-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { adminSession, startAdminFixture, type AdminFixture } from './support.ts';

const formSetDefinition = (slug: string) => ({
  slug,
  name: `Form ${slug}`,
  fields: [
    { key: 'title', type: 'text', label: 'Title', required: true },
    { key: 'body', type: 'tiptap', label: 'Body' },
  ],
});
const doc = (...paragraphs: string[]) => ({ type: 'doc', content: paragraphs.map((text) => ({ type: 'paragraph', content: [{ type: 'text', text }] })) });

/** Every page of a list, following nextCursor; `between` runs after each page (writes during the walk). */
async function walk(f: AdminFixture, route: string, options: { limit: number; session?: { token: string; headers: Record<string, string> }; between?: (page: number) => Promise<void> }): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const separator = route.includes('?') ? '&' : '?';
    const response = await f.call('GET', `${route}${separator}limit=${options.limit}${cursor ? `&cursor=${cursor}` : ''}`, options.session ?? {});
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body.items.length).to.be.at.most(options.limit);
    items.push(...response.body.items);
    cursor = response.body.nextCursor;
    if (cursor === null) return items;
    await options.between?.(page);
  }
  throw new Error('no last page');
}

describe('admin API: long histories and the review desk (issue 15)', function () {
  this.timeout(120_000);
  let f: AdminFixture;
  let dataDir: string;
  let formSetId: string;
  let otherFormSetId: string;
  let session: { token: string; headers: Record<string, string> };

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    f = await startAdminFixture({ dataDir });
    formSetId = (await f.call('POST', '/form-sets', { body: formSetDefinition('articles') })).body.id;
    otherFormSetId = (await f.call('POST', '/form-sets', { body: formSetDefinition('notes') })).body.id;
    session = await adminSession(f);
  });
  after(async () => {
    await f.stop();
  });

  async function createEntry(slug: string, title: string, formSet = formSetId, body = doc(`About ${title}`)) {
    const created = await f.call('POST', `/form-sets/${formSet}/entries`, { body: { slug, fields: { title: { en: title }, body: { en: body } } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body as { entry: { id: string }; revision: { id: string; revision: number } };
  }
  const save = async (entryId: string, title: string, body = doc(title)) => {
    const saved = await f.call('POST', `/entries/${entryId}/revisions`, { body: { fields: { title: { en: title }, body: { en: body } } } });
    expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
    return saved.body as { id: string; revision: number };
  };
  const action = async (revisionId: string, name: string, body: Record<string, unknown> = {}, who: { token?: string; headers?: Record<string, string> } = {}) => {
    const response = await f.call('POST', `/revisions/${revisionId}/${name}`, { body, ...who });
    expect(response.status, `${name}: ${JSON.stringify(response.body)}`).to.equal(200);
    return response.body;
  };

  describe('paging', () => {
    it('revisions: every revision once, in order, while new revisions are saved between pages; order=desc newest first', async () => {
      const entry = await createEntry('paged', 'Paged');
      for (let i = 2; i <= 25; i++) await save(entry.entry.id, `Paged ${i}`);
      const walked = await walk(f, `/entries/${entry.entry.id}/revisions`, { limit: 7, between: async () => void (await save(entry.entry.id, 'During the walk')) });
      const numbers = walked.map((r) => r.revision);
      expect(new Set(numbers).size, 'no revision twice').to.equal(numbers.length);
      expect(numbers.slice(0, 25)).to.deep.equal(Array.from({ length: 25 }, (_, i) => i + 1));
      expect(numbers).to.deep.equal([...numbers].sort((a, b) => a - b));
      const newest = await f.call('GET', `/entries/${entry.entry.id}/revisions?order=desc&limit=2`);
      expect(newest.body.items.map((r: { revision: number }) => r.revision)).to.deep.equal([numbers.at(-1), numbers.at(-1) - 1]);
      expect(newest.body.items[0]).to.not.have.property('snapshot');
      // The entry carries the count and a link, never the revisions.
      const read = await f.call('GET', `/entries/${entry.entry.id}`);
      expect(read.body).to.include({ revisionCount: numbers.length, title: 'During the walk' });
      expect(read.body.latestRevision.revision).to.equal(numbers.length);
    });

    it('history and audit log: complete and without repeats while events are appended between pages', async () => {
      const entry = await createEntry('historic-walk', 'History');
      for (let i = 0; i < 9; i++) await save(entry.entry.id, `H${i}`);
      const before = (await walk(f, `/entries/${entry.entry.id}/history`, { limit: 100 })).map((i) => i.position);
      const walked = await walk(f, `/entries/${entry.entry.id}/history`, { limit: 3, between: async () => void (await save(entry.entry.id, 'more')) });
      const positions = walked.map((i) => i.position);
      expect(new Set(positions).size).to.equal(positions.length);
      expect(positions.slice(0, before.length)).to.deep.equal(before);

      // Newest first: events appended during the walk are newer than the cursor and never shift a page.
      const auditBefore = (await walk(f, `/audit-log?entryId=${entry.entry.id}`, { limit: 100, session })).map((i) => i.position);
      const audit = await walk(f, `/audit-log?entryId=${entry.entry.id}`, { limit: 4, session, between: async () => void (await save(entry.entry.id, 'audited')) });
      expect(audit.map((i) => i.position)).to.deep.equal(auditBefore);
    });

    /** Every page of an entry list, with what each says of the walk; `between` runs after each page. */
    async function walkEntries(route: string, limit: number, between: (page: number) => Promise<void>) {
      const pages: Array<{ items: any[]; asOf: string; changed: boolean }> = [];
      let cursor: string | null = null;
      do {
        const response = await f.call('GET', `${route}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        pages.push(response.body);
        cursor = response.body.nextCursor;
        if (cursor !== null) await between(pages.length - 1);
      } while (cursor !== null && pages.length < 100);
      expect(new Set(pages.map((p) => p.asOf)).size, 'one asOf for the whole walk').to.equal(1);
      const listed = pages.filter((p) => !p.changed).flatMap((p) => p.items);
      const changed = pages.filter((p) => p.changed).flatMap((p) => p.items);
      expect(pages.findIndex((p) => p.changed), 'the changed part comes last').to.be.oneOf([-1, pages.filter((p) => !p.changed).length]);
      return { listed, changed };
    }

    it('entry lists are pinned to their first page: entries renamed, saved and created between pages are never skipped, and none is listed twice as it was', async () => {
      const fresh = (await f.call('POST', '/form-sets', { body: formSetDefinition('walked') })).body.id as string;
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await createEntry(`walk-${i}`, `Walk ${String(i).padStart(2, '0')}`, fresh)).entry.id);
      let created = '';
      const { listed, changed } = await walkEntries(`/form-sets/${fresh}/entries?sort=title:asc`, 5, async (page) => {
        if (page === 0) {
          // Not listed yet, and moved before the cursor: a plain keyset walk would never list it.
          await save(ids[11]!, 'AAA moved to the front');
          // Listed already, and moved after the cursor: a plain keyset walk would list it a second time.
          await save(ids[1]!, 'ZZZ moved to the end');
          created = (await createEntry('walk-new', 'AAB created during the walk', fresh)).entry.id;
        }
        // Listed already (page 1), saved with the same title.
        if (page === 1) await save(ids[7]!, 'Walk 07');
      });
      // As of the first page, in title order: every entry not changed before its page was read, each once.
      expect(listed.map((e) => e.id)).to.deep.equal(ids.filter((id) => id !== ids[11]));
      expect(listed.map((e) => e.title)).to.deep.equal(listed.map((e) => e.title).sort());
      expect(listed.find((e) => e.id === ids[1]).title).to.equal('Walk 01');
      // Then what changed since, in the order of the changes, with the new values.
      expect(changed.map((e) => [e.id, e.title])).to.deep.equal([
        [ids[11], 'AAA moved to the front'],
        [ids[1], 'ZZZ moved to the end'],
        [created, 'AAB created during the walk'],
        [ids[7], 'Walk 07'],
      ]);
      expect(new Set([...listed, ...changed].map((e) => e.id))).to.deep.equal(new Set([...ids, created]));

      // Newest change first (the default): an entry saved mid-walk jumps to the front, yet is not skipped.
      const byUpdate = await walkEntries(`/form-sets/${fresh}/entries?sort=updated_at:desc`, 4, async (page) => {
        if (page === 0) await save(ids[0]!, 'Walk 00 again');
      });
      expect(byUpdate.listed.map((e) => e.id)).to.not.include(ids[0]);
      expect(byUpdate.changed.map((e) => [e.id, e.title])).to.deep.equal([[ids[0], 'Walk 00 again']]);
      expect(byUpdate.listed).to.have.length(12);

      const first = await f.call('GET', `/form-sets/${fresh}/entries?limit=2&sort=title:asc`);
      expect(first.body).to.include({ changed: false });
      expect(first.body.asOf).to.match(/^\d{20}$/);
      const bad = await f.call('GET', `/form-sets/${fresh}/entries?cursor=not-a-cursor!`);
      expect(bad.status).to.equal(400);
      expect(bad.body.error.message).to.match(/^cursor: /);
      const foreign = await f.call('GET', `/form-sets/${fresh}/entries?limit=2&sort=updated_at:desc&cursor=${first.body.nextCursor}`);
      expect(foreign.status).to.equal(400);
      expect(foreign.body.error.message).to.match(/^cursor: it belongs to another list/);
      const otherList = await f.call('GET', `/entries/${ids[0]}/revisions?cursor=${first.body.nextCursor}`);
      expect(otherList.status).to.equal(400);
    });
  });

  describe('entry list filters and sorts', () => {
    let listFormSet: string;
    const entries: Record<string, string> = {};
    before(async () => {
      listFormSet = (await f.call('POST', '/form-sets', { body: formSetDefinition('desk') })).body.id;
      const draft = await createEntry('draft-one', 'Banana bread', listFormSet, doc('A recipe with walnuts'));
      const pending = await createEntry('pending-one', 'apple pie', listFormSet, doc('Cinnamon and butter'));
      const live = await createEntry('live-one', 'Cherry tart', listFormSet, doc('Pastry'));
      entries['draft'] = draft.entry.id;
      entries['pending'] = pending.entry.id;
      entries['live'] = live.entry.id;
      await action(pending.revision.id, 'submit', {}, session);
      await action(live.revision.id, 'submit');
      await action(live.revision.id, 'publish', { revision: 1 });
      await f.call('PUT', `/entries/${pending.entry.id}/assignee`, { body: { userId: f.project.userId } });
    });
    const ids = async (query: string) => {
      const response = await f.call('GET', `/form-sets/${listFormSet}/entries${query}`);
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      return response.body.items.map((e: { id: string }) => e.id);
    };

    it('status (of the latest revision), assignee, updatedBy and the updated-time range', async () => {
      expect(await ids('?status=draft')).to.deep.equal([entries['draft']]);
      expect(await ids('?status=pending_review')).to.deep.equal([entries['pending']]);
      expect(await ids('?status=published')).to.deep.equal([entries['live']]);
      expect(await ids(`?assignee=${f.project.userId}`)).to.deep.equal([entries['pending']]);
      // The last change to "pending" was the agent's assignment; to the others the agent's save and publish.
      expect(await ids(`?updatedBy=${f.project.userId}`)).to.deep.equal([]);
      expect((await ids(`?updatedBy=${f.project.agentKey.keyId}`)).sort()).to.deep.equal(Object.values(entries).sort());
      const all = await f.call('GET', `/form-sets/${listFormSet}/entries`);
      const times = all.body.items.map((e: { updatedAt: string }) => e.updatedAt) as string[];
      const newest = times[0]!;
      expect(await ids(`?updatedFrom=${encodeURIComponent(newest)}`)).to.deep.equal([all.body.items[0].id]);
      expect(await ids(`?updatedTo=${encodeURIComponent(newest)}`)).to.not.include(all.body.items[0].id);
      expect(await ids(`?updatedFrom=2000-01-01T00:00:00Z&updatedTo=2000-01-02T00:00:00Z`)).to.deep.equal([]);
    });

    it('q searches titles and text fields of the latest revision, on every plan', async () => {
      expect(await ids('?q=walnuts')).to.deep.equal([entries['draft']]);
      expect(await ids('?q=APPLE')).to.deep.equal([entries['pending']]);
      expect(await ids('?q=apple%20butter')).to.deep.equal([entries['pending']]);
      expect(await ids('?q=nothing-here')).to.deep.equal([]);
      const free = await startAdminFixture({ plan: 'free' });
      try {
        const fs1 = (await free.call('POST', '/form-sets', { body: formSetDefinition('free') })).body.id;
        await free.call('POST', `/form-sets/${fs1}/entries`, { body: { slug: 'x', fields: { title: { en: 'Searchable on free' } } } });
        const found = await free.call('GET', `/form-sets/${fs1}/entries?q=searchable`);
        expect(found.status, JSON.stringify(found.body)).to.equal(200);
        expect(found.body.items).to.have.length(1);
      } finally {
        await free.stop();
      }
    });

    it('sorts by updated time, title (case-insensitive) and publish time, either way', async () => {
      expect(await ids('?sort=title:asc')).to.deep.equal([entries['pending'], entries['draft'], entries['live']]);
      expect(await ids('?sort=title:desc')).to.deep.equal([entries['live'], entries['draft'], entries['pending']]);
      expect((await ids('?sort=published_at:desc'))[0]).to.equal(entries['live']);
      expect((await ids('?sort=published_at:asc')).at(-1)).to.equal(entries['live']);
      const updated = await f.call('GET', `/form-sets/${listFormSet}/entries?sort=updated_at:asc`);
      const times = updated.body.items.map((e: { updatedAt: string }) => e.updatedAt);
      expect(times).to.deep.equal([...times].sort());
    });

    it('an unknown parameter or value is a 400 naming it, never ignored', async () => {
      for (const [query, pattern] of [
        ['?state=draft', /unknown parameter "state"/],
        ['?page=2', /unknown parameter "page"/],
        ['?status=waiting', /^status: /],
        ['?sort=slug:asc', /^sort: /],
        ['?updatedFrom=yesterday', /^updatedFrom: /],
        ['?limit=0', /^limit: /],
        ['?limit=101', /^limit: /],
        ['?q=%21%21%21', /^q: no word to search for/],
        ['?cursor=not-a-cursor', /^cursor: /],
      ] as const) {
        const response = await f.call('GET', `/form-sets/${listFormSet}/entries${query}`);
        expect(response.status, query).to.equal(400);
        expect(response.body.error.code).to.equal('VALIDATION_ERROR');
        expect(response.body.error.message, query).to.match(pattern);
      }
    });
  });

  describe('review queue', () => {
    const queue = async (query = '') => {
      const response = await f.call('GET', `/review-queue${query}`);
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      return response.body.items as any[];
    };
    const entriesInQueue = async (query = '') => (await queue(query)).map((i) => i.entry.id);

    it('follows submit, approve, reject, withdraw, schedule and scheduled publish, oldest submission first, with filters; a rebuild gives the same queue', async () => {
      const start = (await queue()).map((i) => i.entry.id);
      const a = await createEntry('queue-a', 'Queue A');
      const b = await createEntry('queue-b', 'Queue B', otherFormSetId);
      const c = await createEntry('queue-c', 'Queue C');
      const d = await createEntry('queue-d', 'Queue D');
      await action(a.revision.id, 'submit', {}, session);
      await action(b.revision.id, 'submit');
      await action(c.revision.id, 'submit');
      await action(d.revision.id, 'submit');
      let items = (await queue()).filter((i) => !start.includes(i.entry.id));
      expect(items.map((i) => i.entry.id)).to.deep.equal([a.entry.id, b.entry.id, c.entry.id, d.entry.id]);
      expect(items[0]).to.deep.include({ revisionId: a.revision.id, revision: 1, status: 'pending_review', assignee: null, publishAt: null });
      expect(items[0].entry).to.deep.equal({ id: a.entry.id, slug: 'queue-a', title: 'Queue A' });
      expect(items[0].formSet).to.deep.equal({ id: formSetId, name: 'Form articles' });
      expect(items[0].submittedBy).to.deep.equal({ type: 'user', id: f.project.userId });
      expect(items[1].submittedBy).to.deep.equal({ type: 'agent', id: f.project.agentKey.keyId });

      // Filters: form set, assignee, status.
      expect(await entriesInQueue(`?formSetId=${otherFormSetId}`)).to.deep.equal([b.entry.id]);
      await f.call('PUT', `/entries/${c.entry.id}/assignee`, { body: { userId: f.project.userId } });
      expect((await entriesInQueue(`?assignee=${f.project.userId}`)).filter((id) => !start.includes(id))).to.deep.equal([c.entry.id]);

      // approve with a date: scheduled, with its publish time; approve now: gone (published).
      const publishAt = new Date(Date.now() + 3_600_000).toISOString();
      await action(a.revision.id, 'approve', { publishAt });
      await action(b.revision.id, 'approve');
      // reject: gone; withdraw: gone (back to draft).
      await action(c.revision.id, 'reject', { reason: 'needs work' }, session);
      await action(d.revision.id, 'withdraw');
      items = (await queue()).filter((i) => !start.includes(i.entry.id));
      expect(items.map((i) => [i.entry.id, i.status, i.publishAt])).to.deep.equal([[a.entry.id, 'scheduled', publishAt]]);
      expect(await entriesInQueue('?status=scheduled')).to.include(a.entry.id);
      expect(await entriesInQueue('?status=pending_review')).to.not.include(a.entry.id);

      // d is submitted again: back in the queue, after a (its new submission is later).
      await action(d.revision.id, 'submit');
      expect((await entriesInQueue()).filter((id) => !start.includes(id))).to.deep.equal([a.entry.id, d.entry.id]);

      // The scheduled publish: the job, on a clock past publishAt, publishes a, and it leaves the queue.
      const clock = new ManualClock(new Date(Date.parse(publishAt) + 60_000));
      const publisher = new ScheduledPublisher({ log: f.service.log, reader: new ReadModelReader(f.service.stores.readModels, { cacheMs: 0 }), clock, logger: pino({ level: 'silent' }), intervalMs: 1000 });
      expect(await publisher.runOnce()).to.equal(1);
      expect(await f.service.supervisor!.waitFor((await f.service.log.headPosition())!, 5000)).to.equal(true);
      expect((await entriesInQueue()).filter((id) => !start.includes(id))).to.deep.equal([d.entry.id]);
      expect((await f.call('GET', `/entries/${a.entry.id}`)).body.liveRevision.revisionId).to.equal(a.revision.id);

      // A rebuild of the read model from the log reproduces the same queue, document for document; the
      // service follows it and answers from the new generation.
      // Review notices (the projection's outbox) are sent first, so that no completion lands between the two dumps.
      const notices = new ReadModelReader(f.service.stores.readModels, { cacheMs: 0 });
      await eventually(() => notices.find('review-queue', 'notices', { filter: { status: 'pending' }, limit: 1 }), (pending) => pending.length === 0, 15_000);
      expect(await f.service.supervisor!.waitFor((await f.service.log.headPosition())!, 5000)).to.equal(true);
      const live = await f.call('GET', '/review-queue?limit=100');
      const store = f.service.stores.readModels;
      const before = await dumpReadModels(store, [reviewQueue]);
      const rebuild = startRebuild({ projection: reviewQueue, log: f.service.log, store, clock: { now: () => new Date() }, logger: pino({ level: 'silent' }) });
      const result = await rebuild.result;
      expect(result.previousGeneration).to.be.a('number');
      expect(await dumpReadModels(store, [reviewQueue])).to.deep.equal(before);
      // The service has followed the swap by the time the replaced generation goes (its grace is for that).
      await rebuild.dropped;
      expect(f.service.supervisor!.liveGeneration('review-queue')).to.equal(result.generation);
      expect((await f.call('GET', '/review-queue?limit=100')).body).to.deep.equal(live.body);
    });

    it('refuses unknown parameters and bad values with 400 naming them', async () => {
      expect((await f.call('GET', '/review-queue?assigned=x')).body.error.message).to.match(/unknown parameter "assigned"/);
      expect((await f.call('GET', '/review-queue?status=draft')).body.error.message).to.match(/^status: /);
      expect((await f.call('GET', '/review-queue?formSetId=nope')).body.error.message).to.match(/^formSetId: /);
    });
  });

  describe('diff', () => {
    it('a field-level diff between any two revisions; rich text block by block', async () => {
      const entry = await createEntry('diff-rich', 'Before', formSetId, doc('Intro', 'The quick fox', 'Outro'));
      for (let i = 0; i < 5; i++) await save(entry.entry.id, `Middle ${i}`, doc('Intro'));
      const last = await save(entry.entry.id, 'After', doc('Intro', 'The slow fox', 'New paragraph', 'Outro'));
      const diff = await f.call('GET', `/entries/${entry.entry.id}/diff?from=${entry.revision.id}&to=${last.id}`);
      expect(diff.status, JSON.stringify(diff.body)).to.equal(200);
      expect(diff.body.from).to.include({ revision: 1 });
      expect(diff.body.to).to.include({ revision: 7 });
      const [title, body] = diff.body.changes;
      expect(title).to.deep.equal({ field: 'title', locale: 'en', kind: 'changed', before: 'Before', after: 'After' });
      expect(body).to.include({ field: 'body', locale: 'en', kind: 'changed' });
      expect(body.before).to.equal(undefined);
      expect(body.blocks.map((b: any) => [b.kind, b.before?.text ?? null, b.after?.text ?? null])).to.deep.equal([
        ['changed', 'The quick fox', 'The slow fox'],
        ['added', null, 'New paragraph'],
      ]);
      const unknown = await f.call('GET', `/entries/${entry.entry.id}/diff?from=${entry.revision.id}&to=${last.id}&format=html`);
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.message).to.match(/unknown parameter "format"; this route takes from, to/);
    });
  });

  describe('the OpenAPI document', () => {
    it('documents what the lists, the entry and the diff answer', async () => {
      const documented = await documentedResponses(f.service.url);
      const entry = await createEntry('documented', 'Documented', formSetId, doc('One', 'Two'));
      const second = await save(entry.entry.id, 'Documented again', doc('One', 'Two and a half'));
      await action(second.id, 'submit');
      await f.call('PUT', `/entries/${entry.entry.id}/assignee`, { body: { userId: f.project.userId } });
      const answers: Array<[string, string, { token?: string; headers?: Record<string, string> }?]> = [
        ['listEntries', `/form-sets/${formSetId}/entries?limit=2`],
        ['getEntry', `/entries/${entry.entry.id}`],
        ['listRevisions', `/entries/${entry.entry.id}/revisions?limit=1`],
        ['getEntryHistory', `/entries/${entry.entry.id}/history?limit=2`],
        ['getAuditLog', `/audit-log?limit=2`, session],
        ['getReviewQueue', `/review-queue?limit=2`],
        ['diffEntryRevisions', `/entries/${entry.entry.id}/diff?from=${entry.revision.id}&to=${second.id}`],
      ];
      for (const [operationId, route, who] of answers) {
        const response = await f.call('GET', route, who ?? {});
        expect(response.status, `${route}: ${JSON.stringify(response.body)}`).to.equal(200);
        expect(JSON.stringify(response.body), `${route} answers something`).to.not.equal('{"items":[],"nextCursor":null}');
        documented(operationId, 200, response.body);
      }
    });
  });

  describe('snapshots', () => {
    it('deleting every snapshot (and restarting without the cache) changes no answer', async () => {
      const entry = await createEntry('snapshotted', 'Snap');
      for (let i = 2; i <= 40; i++) await save(entry.entry.id, `Snap ${i}`);
      const latest = await save(entry.entry.id, 'Snap last');
      const token = f.project.agentKey.key;
      const answers = async () => ({
        entry: (await f.call('GET', `/entries/${entry.entry.id}`, { token })).body,
        revisions: await walk(f, `/entries/${entry.entry.id}/revisions`, { limit: 100, session: { token, headers: {} } }),
        // Decisions against the aggregate: a stale revision number and an older revision are refused the same way.
        stale: (await f.call('POST', `/revisions/${latest.id}/submit`, { body: { revision: 3 }, token })).body,
        old: (await f.call('POST', `/revisions/${entry.revision.id}/submit`, { body: {}, token })).body,
      });
      const before = await answers();
      expect(before.stale.error.code).to.equal('REVISION_CONFLICT');
      expect(before.old.error.code).to.equal('REVISION_CONFLICT');
      const file = path.join(dataDir, 'snapshots.sqlite');
      expect(fs.existsSync(file)).to.equal(true);
      await f.stop();
      const store = SqliteSnapshotStore.open(file);
      expect(await store.get(`entry-${entry.entry.id}`), 'a snapshot was stored').to.not.equal(null);
      await store.clear();
      await store.close();
      f = await startAdminFixture({ dataDir, env: { AGGREGATE_CACHE_MB: '0' } });
      const after = await answers();
      expect(after).to.deep.equal(before);
      // And the next command decides the same as before: submit the latest revision.
      const submitted = await f.call('POST', `/revisions/${latest.id}/submit`, { body: { revision: latest.revision }, token });
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(200);
      expect(submitted.body).to.include({ status: 'pending_review', revision: 41 });
      session = await adminSession(f);
    });
  });
});
