import { decodePosition, encodePosition } from '../../src/event-store/position.ts';
import { expect } from 'chai';
import { projectionHarness } from '../support/projection-harness.ts';
import { handleCommand } from '../../src/application/command-handler.ts';
import { duplicateEntry, entryDecider, type EntryCommand } from '../../src/domain/content/entry/entry-decider.ts';
import { entryStream } from '../../src/domain/content/entry/entry-events.ts';
import { SCHEDULER, type EntryPrincipal } from '../../src/domain/content/entry/entry-workflow.ts';
import { formSetDecider, type FormSetCommand } from '../../src/domain/content/form-set/form-set-decider.ts';
import { formSetStreamId } from '../../src/domain/content/form-set/form-set-events.ts';
import { masterDecider, type MasterCommand } from '../../src/domain/content/master/master-decider.ts';
import { masterStreamId } from '../../src/domain/content/master/master-events.ts';
import type { Principal } from '../../src/domain/principal.ts';
import type { Projection } from '../../src/projection-engine/projection.ts';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { content } from '../../projections/content.ts';
import { silentLogger } from '../support/engine-fixture.ts';
import { dumpReadModels } from '../support/dump-read-models.ts';

/** Deterministic UUIDs: id(1) = 00000000-0000-4000-8000-000000000001. */
const id = (n: number): string => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
const PROJECT = id(900);
const BLOG = id(800);
const SCRATCH = id(801);
const ENTRY = id(1);
const COPY = id(2);
const OTHER = id(3);
const R1 = id(101);
const R2 = id(102);
const R3 = id(103);
const R4 = id(104);
const C1 = id(201);
const C2 = id(202);
const O1 = id(301);
const MASTER = id(700);
const T0 = '2026-11-22T12:00:00.000Z';

const admin: Principal = { kind: 'user', userId: 'u-admin', tenantId: 't1', role: 'tenant_admin' };
const editor: Principal = { kind: 'user', userId: 'u-editor', tenantId: 't1', role: 'tenant_user' };

function blogDefinition(formSetId = BLOG, slug = 'blog'): Record<string, unknown> {
  return {
    id: formSetId,
    slug,
    name: 'Blog',
    description: 'Posts',
    blocks: [{ id: 'content', label: 'Content', fieldKeys: ['title', 'body'] }],
    fields: [
      { key: 'title', type: 'text', label: 'Title', required: true, limits: { maxLength: 120 } },
      { key: 'body', type: 'tiptap', label: 'Body' },
    ],
    seoRoles: { title: 'title' },
  };
}

function harness(projection: Projection) {
  return projectionHarness(projection, { start: T0, batchSize: 4 });
}

describe('content projection', () => {
  let h: ReturnType<typeof harness>;
  beforeEach(() => {
    h = harness(content);
  });
  afterEach(async () => {
    await h.close();
  });

  /** Each command one minute after the last; returns the new time. */
  const tick = (ms = 60_000): string => {
    h.clock.advance(ms);
    return h.clock.now().toISOString();
  };
  const actorOf = (principal: EntryPrincipal) => ({
    actor: principal.kind === 'user' ? { type: 'user' as const, id: principal.userId } : principal.kind === 'agent' ? { type: 'agent' as const, id: principal.keyId } : { type: 'system' as const, id: principal.name },
  });
  /** Runs an entry command through the real decider and appends what it decides; returns the command's time. */
  const entry = async (entryId: string, command: EntryCommand, principal: EntryPrincipal = admin): Promise<string> => {
    const at = tick();
    const result = await handleCommand(h.log, entryStream(entryId), entryDecider, command, { principal, plan: 'business', now: h.clock.now() }, actorOf(principal));
    expect(result.events, `${command.type} decided nothing`).not.to.be.empty;
    return at;
  };
  const formSet = async (formSetId: string, command: FormSetCommand): Promise<string> => {
    const at = tick();
    await handleCommand(h.log, formSetStreamId(formSetId), formSetDecider, command, { principal: admin }, actorOf(admin));
    return at;
  };
  const master = async (command: MasterCommand): Promise<string> => {
    const at = tick();
    await handleCommand(h.log, masterStreamId(MASTER), masterDecider, command, { principal: admin, now: at }, actorOf(admin));
    return at;
  };
  const revision = async (revisionId: string) => h.doc('revisions', revisionId);
  /** A revision's snapshot, read where its document says: the log, at the position of its save (version 4). */
  const snapshotOf = async (revisionId: string) => {
    const { snapshotAt } = (await revision(revisionId)) as { snapshotAt: string };
    const [saved] = await h.log.readAt([decodePosition(snapshotAt)]);
    expect(saved).to.deep.include({ type: 'entry.revision-saved' });
    return (saved!.data as { revisionId: string; snapshot: unknown }).snapshot;
  };
  const entryDoc = async (entryId: string) => h.doc('entries', entryId);

  describe('form sets', () => {
    it('holds the full definition and its version; an update replaces both; a deleted form set is removed', async () => {
      const createdAt = await formSet(BLOG, { type: 'create_form_set', projectId: PROJECT, definition: blogDefinition() });
      await h.project();
      const created = await h.doc('form_sets', BLOG);
      expect(created).to.deep.include({ formSetId: BLOG, projectId: PROJECT, slug: 'blog', name: 'Blog', description: 'Posts', version: 1, createdAt, updatedAt: createdAt });
      expect((created!['definition'] as { fields: unknown[] }).fields).to.have.length(2);
      expect(created?.['definition']).to.deep.include({ id: BLOG, slug: 'blog', widgetRoles: {} });

      const updatedDefinition = {
        ...blogDefinition(),
        name: 'Journal',
        slug: 'journal',
        description: null,
        fields: [...(blogDefinition()['fields'] as unknown[]), { key: 'summary', type: 'textarea', label: 'Summary' }],
      };
      const updatedAt = await formSet(BLOG, { type: 'update_form_set', definition: updatedDefinition });
      await formSet(SCRATCH, { type: 'create_form_set', projectId: PROJECT, definition: blogDefinition(SCRATCH, 'scratch') });
      await h.project();
      const updated = await h.doc('form_sets', BLOG);
      expect(updated).to.deep.include({ formSetId: BLOG, slug: 'journal', name: 'Journal', description: null, version: 2, createdAt, updatedAt });
      expect((updated!['definition'] as { fields: Array<{ key: string }> }).fields.map((f) => f.key)).to.deep.equal(['title', 'body', 'summary']);
      expect((await h.find('form_sets', { filter: { projectId: PROJECT, slug: 'journal' } })).map((f) => f['formSetId'])).to.deep.equal([BLOG]);
      expect(await h.doc('form_sets', SCRATCH)).not.to.equal(null);

      await formSet(SCRATCH, { type: 'delete_form_set' });
      // The freed slug can be taken by another form set in the same batch.
      await formSet(id(802), { type: 'create_form_set', projectId: PROJECT, definition: blogDefinition(id(802), 'scratch') });
      await h.project();
      expect(await h.doc('form_sets', SCRATCH)).to.equal(null);
      expect((await h.find('form_sets', { filter: { projectId: PROJECT }, sort: [['slug', 'asc']] })).map((f) => f['formSetId'])).to.deep.equal([BLOG, id(802)]);
    });
  });

  describe('entries and revisions', () => {
    it('follows a revision through every workflow status, and the entry its latest and live revisions', async () => {
      const createdAt = await entry(ENTRY, { type: 'create', entryId: ENTRY, projectId: PROJECT, formSetId: BLOG, slug: 'hello', initialRevision: { revisionId: R1, snapshot: { title: { en: 'Hello' } } } }, editor);
      await h.project();
      expect(await entryDoc(ENTRY)).to.deep.equal({
        entryId: ENTRY,
        projectId: PROJECT,
        formSetId: BLOG,
        slug: 'hello',
        previousSlugs: [],
        importPath: null,
        external: null,
        assignee: null,
        createdAt,
        updatedAt: createdAt,
        updatedAtMs: Date.parse(createdAt),
        updatedBy: { type: 'user', id: 'u-editor' },
        // The log position of the last change: the revision saved with the entry.
        updatedPosition: encodePosition((await h.log.headPosition())!),
        latestRevision: { revisionId: R1, revision: 1, status: 'draft' },
        liveRevision: null,
        revisionCount: 1,
        // The title field (SEO title role) of the latest revision in the default locale, and its search tokens.
        title: 'Hello',
        titleSort: 'hello',
        search: 'hello hello',
        // The locales the latest revision has text in: the console's locale coverage.
        locales: ['en'],
        duplicatedFrom: null,
      });
      expect(await revision(R1)).to.deep.equal({
        revisionId: R1,
        entryId: ENTRY,
        projectId: PROJECT,
        formSetId: BLOG,
        revision: 1,
        status: 'draft',
        // Where its snapshot is: the save, no copy of it (version 4).
        snapshotAt: encodePosition((await h.log.headPosition())!),
        savedBy: { type: 'user', id: 'u-editor' },
        savedAt: createdAt,
        updatedAt: createdAt,
        publishAt: null,
        publishedAt: null,
      });
      expect(await snapshotOf(R1)).to.deep.equal({ title: { en: 'Hello' } });

      // draft -> pending_review
      const submittedAt = await entry(ENTRY, { type: 'submitForReview', entryId: ENTRY, revisionId: R1 }, editor);
      await h.project();
      expect(await revision(R1)).to.include({ status: 'pending_review', submittedAt, updatedAt: submittedAt });
      expect(await entryDoc(ENTRY)).to.deep.include({ latestRevision: { revisionId: R1, revision: 1, status: 'pending_review' }, updatedAt: submittedAt });

      // pending_review -> scheduled (approve with a date): the scheduler finds it by publishAt
      const publishAt = '2026-12-01T09:00:00.000Z';
      await entry(ENTRY, { type: 'approve', entryId: ENTRY, revisionId: R1, publishAt: { local: '2026-12-01T10:00', timeZone: 'Europe/Berlin' } });
      await h.project();
      expect(await revision(R1)).to.include({ status: 'scheduled', publishAt, publishedAt: null });
      expect((await entryDoc(ENTRY))?.['latestRevision']).to.deep.equal({ revisionId: R1, revision: 1, status: 'scheduled' });
      const due = await h.find('revisions', { filter: { projectId: PROJECT, status: 'scheduled', publishAt: { $lte: '2026-12-01T09:00:00.000Z' } } });
      expect(due.map((r) => r['revisionId'])).to.deep.equal([R1]);
      expect(await h.find('revisions', { filter: { projectId: PROJECT, status: 'scheduled', publishAt: { $lte: '2026-11-30T00:00:00.000Z' } } })).to.deep.equal([]);

      // scheduled -> draft (withdraw cancels the schedule)
      await entry(ENTRY, { type: 'withdraw', entryId: ENTRY, revisionId: R1 }, editor);
      await h.project();
      expect(await revision(R1)).to.include({ status: 'draft', publishAt: null });
      expect((await entryDoc(ENTRY))?.['latestRevision']).to.deep.include({ status: 'draft' });

      // draft -> pending_review -> rejected, with the reason
      await entry(ENTRY, { type: 'submitForReview', entryId: ENTRY, revisionId: R1 }, editor);
      const rejectedAt = await entry(ENTRY, { type: 'reject', entryId: ENTRY, revisionId: R1, reason: 'Needs a source' });
      await h.project();
      expect(await revision(R1)).to.include({ status: 'rejected', rejectedReason: 'Needs a source', rejectedAt, publishAt: null });
      expect((await entryDoc(ENTRY))?.['latestRevision']).to.deep.include({ status: 'rejected' });

      // rejected -> draft (reopen clears the rejection)
      await entry(ENTRY, { type: 'reopen', entryId: ENTRY, revisionId: R1 }, editor);
      await h.project();
      const reopened = await revision(R1);
      expect(reopened).to.include({ status: 'draft' });
      expect(reopened).not.to.have.any.keys('rejectedReason', 'rejectedAt');

      // draft -> pending_review -> published (approve without a date)
      await entry(ENTRY, { type: 'submitForReview', entryId: ENTRY, revisionId: R1 }, editor);
      const firstPublishedAt = await entry(ENTRY, { type: 'approve', entryId: ENTRY, revisionId: R1 });
      await h.project();
      expect(await revision(R1)).to.include({ status: 'published', publishedAt: firstPublishedAt, publishTrigger: 'approve', publishAt: null });
      expect(await entryDoc(ENTRY)).to.deep.include({
        latestRevision: { revisionId: R1, revision: 1, status: 'published' },
        liveRevision: { revisionId: R1, revision: 1, publishedAt: firstPublishedAt },
      });

      // Editing a published entry: a new draft, the live revision unchanged.
      const savedAt = await entry(ENTRY, { type: 'saveRevision', entryId: ENTRY, revisionId: R2, snapshot: { title: { en: 'Hello again' } }, expectedRevision: 1 }, editor);
      await h.project();
      expect(await revision(R2)).to.include({ revision: 2, status: 'draft', savedAt });
      expect(await entryDoc(ENTRY)).to.deep.include({
        latestRevision: { revisionId: R2, revision: 2, status: 'draft' },
        liveRevision: { revisionId: R1, revision: 1, publishedAt: firstPublishedAt },
        revisionCount: 2,
        title: 'Hello again',
      });

      // The scheduled job publishes R2 once its date has passed, superseding R1.
      await entry(ENTRY, { type: 'submitForReview', entryId: ENTRY, revisionId: R2 }, editor);
      await entry(ENTRY, { type: 'approve', entryId: ENTRY, revisionId: R2, publishAt: { at: '2026-11-23T00:00:00Z' } });
      await h.project();
      expect(await revision(R2)).to.include({ status: 'scheduled', publishAt: '2026-11-23T00:00:00.000Z' });
      h.clock.set('2026-11-23T00:05:00.000Z');
      const scheduledPublishAt = await entry(ENTRY, { type: 'publishScheduled', entryId: ENTRY }, SCHEDULER);
      await h.project();
      expect(await revision(R2)).to.include({ status: 'published', publishedAt: scheduledPublishAt, publishAt: '2026-11-23T00:00:00.000Z', publishTrigger: 'schedule' });
      expect(await revision(R1)).to.include({ status: 'superseded', supersededBy: R2, supersededAt: scheduledPublishAt, publishedAt: firstPublishedAt });
      expect((await entryDoc(ENTRY))?.['liveRevision']).to.deep.equal({ revisionId: R2, revision: 2, publishedAt: scheduledPublishAt });
      expect(await h.find('revisions', { filter: { projectId: PROJECT, status: 'scheduled' } })).to.deep.equal([]);

      // POST /revisions/{id}/publish: R3 goes live, R2 is superseded; R1 stays superseded.
      await entry(ENTRY, { type: 'saveRevision', entryId: ENTRY, revisionId: R3, snapshot: { title: { en: 'Third' } } }, editor);
      await entry(ENTRY, { type: 'submitForReview', entryId: ENTRY, revisionId: R3 }, editor);
      const publishedAt = await entry(ENTRY, { type: 'publish', entryId: ENTRY, revisionId: R3, revision: 3 });
      // Restoring R1 as a new draft.
      const restoredAt = await entry(ENTRY, { type: 'restoreRevision', entryId: ENTRY, revisionId: R4, fromRevisionId: R1, source: { revision: 1, snapshot: { title: { en: 'Hello' } } } }, editor);
      await h.project();
      expect(await revision(R3)).to.include({ status: 'published', publishedAt, publishTrigger: 'publish' });
      expect(await revision(R2)).to.include({ status: 'superseded', supersededBy: R3 });
      expect(await revision(R1)).to.include({ status: 'superseded', supersededBy: R2 });
      expect(await revision(R4)).to.deep.include({ status: 'draft', restoredFrom: { revisionId: R1, revision: 1 }, savedAt: restoredAt });
      expect(await snapshotOf(R4)).to.deep.equal({ title: { en: 'Hello' } });
      expect(await entryDoc(ENTRY)).to.deep.include({
        latestRevision: { revisionId: R4, revision: 4, status: 'draft' },
        liveRevision: { revisionId: R3, revision: 3, publishedAt },
        revisionCount: 4,
        updatedAt: restoredAt,
      });
      const history = await h.find('revisions', { filter: { entryId: ENTRY }, sort: [['revision', 'asc']] });
      expect(history.map((r) => [r['revision'], r['status']])).to.deep.equal([
        [1, 'superseded'],
        [2, 'superseded'],
        [3, 'published'],
        [4, 'draft'],
      ]);
    });

    it('a rejected scheduled revision leaves the schedule; withdrawing a pending one returns it to draft', async () => {
      await entry(ENTRY, { type: 'create', entryId: ENTRY, projectId: PROJECT, formSetId: BLOG, slug: 'hello', initialRevision: { revisionId: R1, snapshot: {} } });
      await entry(ENTRY, { type: 'submitForReview', entryId: ENTRY, revisionId: R1 });
      await entry(ENTRY, { type: 'approve', entryId: ENTRY, revisionId: R1, publishAt: { at: '2027-01-01T00:00:00Z' } });
      await entry(ENTRY, { type: 'reject', entryId: ENTRY, revisionId: R1 });
      await h.project();
      const rejected = await revision(R1);
      expect(rejected).to.include({ status: 'rejected', publishAt: null });
      expect(rejected).not.to.have.property('rejectedReason');
      await entry(ENTRY, { type: 'reopen', entryId: ENTRY, revisionId: R1 });
      await entry(ENTRY, { type: 'submitForReview', entryId: ENTRY, revisionId: R1 });
      await entry(ENTRY, { type: 'withdraw', entryId: ENTRY, revisionId: R1 });
      await h.project();
      expect(await revision(R1)).to.include({ status: 'draft', publishAt: null });
      expect((await entryDoc(ENTRY))?.['latestRevision']).to.deep.equal({ revisionId: R1, revision: 1, status: 'draft' });
    });

    it('keeps former slugs as redirects, drops a redirect when the slug is taken back, and files import metadata and the assignee', async () => {
      await entry(ENTRY, { type: 'create', entryId: ENTRY, projectId: PROJECT, formSetId: BLOG, slug: 'hello', importPath: '/old/hello.html' });
      await entry(ENTRY, { type: 'rename', entryId: ENTRY, slug: 'hello-world' });
      await h.project();
      expect(await h.doc('slug_redirects', `${BLOG}:hello`)).to.deep.equal({ formSetId: BLOG, projectId: PROJECT, oldSlug: 'hello', entryId: ENTRY });
      expect(await entryDoc(ENTRY)).to.deep.include({ slug: 'hello-world', previousSlugs: ['hello'], importPath: '/old/hello.html' });

      await entry(ENTRY, { type: 'rename', entryId: ENTRY, slug: 'greetings' });
      await entry(ENTRY, { type: 'rename', entryId: ENTRY, slug: 'hello' });
      await entry(ENTRY, { type: 'setImportMetadata', entryId: ENTRY, importPath: null, external: { sourceType: 'wordpress', entityType: 'post', externalId: '42' } });
      const assignedAt = await entry(ENTRY, { type: 'assign', entryId: ENTRY, userId: 'u-reviewer' });
      await h.project();
      expect(await entryDoc(ENTRY)).to.deep.include({
        slug: 'hello',
        previousSlugs: ['hello-world', 'greetings'],
        importPath: null,
        external: { sourceType: 'wordpress', entityType: 'post', externalId: '42' },
        assignee: 'u-reviewer',
        updatedAt: assignedAt,
      });
      expect(await h.doc('slug_redirects', `${BLOG}:hello`)).to.equal(null);
      const redirects = await h.find('slug_redirects', { filter: { entryId: ENTRY } });
      expect(redirects.map((r) => r['oldSlug'])).to.deep.equal(['greetings', 'hello-world']);
      // Lookups by slug, by import path and by external identity.
      expect((await h.find('entries', { filter: { formSetId: BLOG, slug: 'hello' } })).map((e) => e['entryId'])).to.deep.equal([ENTRY]);
      const byExternal = await h.find('entries', {
        filter: { projectId: PROJECT, 'external.sourceType': 'wordpress', 'external.entityType': 'post', 'external.externalId': '42' },
      });
      expect(byExternal.map((e) => e['entryId'])).to.deep.equal([ENTRY]);
      expect(await h.find('entries', { filter: { projectId: PROJECT, importPath: '/old/hello.html' } })).to.deep.equal([]);
    });

    it('files a duplicate with where it came from; a deleted entry leaves with all its revisions and redirects', async () => {
      await entry(ENTRY, { type: 'create', entryId: ENTRY, projectId: PROJECT, formSetId: BLOG, slug: 'hello', initialRevision: { revisionId: R1, snapshot: { title: { en: 'Hi' } } } });
      await entry(OTHER, { type: 'create', entryId: OTHER, projectId: PROJECT, formSetId: BLOG, slug: 'other', initialRevision: { revisionId: O1, snapshot: {} } });
      const source = await handleCommand(h.log, entryStream(ENTRY), entryDecider, { type: 'saveRevision', entryId: ENTRY, revisionId: R2, snapshot: { title: { en: 'Hi 2' } } }, { principal: admin, plan: 'business', now: h.clock.now() }, actorOf(admin));
      await entry(COPY, duplicateEntry(source.state, { entryId: COPY, revisionId: C1 }));
      await h.project();
      expect(await entryDoc(COPY)).to.deep.include({
        slug: 'hello-copy',
        duplicatedFrom: { entryId: ENTRY, revisionId: R2, revision: 2 },
        latestRevision: { revisionId: C1, revision: 1, status: 'draft' },
      });
      expect(await revision(C1)).to.deep.include({ entryId: COPY });
      expect(await snapshotOf(C1)).to.deep.equal({ title: { en: 'Hi 2' } });

      await entry(COPY, { type: 'saveRevision', entryId: COPY, revisionId: C2, snapshot: { title: { en: 'Copy' } } });
      await entry(COPY, { type: 'submitForReview', entryId: COPY, revisionId: C2 });
      await entry(COPY, { type: 'approve', entryId: COPY, revisionId: C2, publishAt: { at: '2027-01-01T00:00:00Z' } });
      await entry(COPY, { type: 'rename', entryId: COPY, slug: 'copied' });
      await entry(COPY, { type: 'rename', entryId: COPY, slug: 'copied-again' });
      await h.project();
      expect(await h.find('slug_redirects', { filter: { entryId: COPY } })).to.have.length(2);

      await entry(COPY, { type: 'delete', entryId: COPY });
      await h.project();
      expect(await entryDoc(COPY)).to.equal(null);
      expect(await revision(C1)).to.equal(null);
      expect(await revision(C2)).to.equal(null);
      expect(await h.find('revisions', { filter: { entryId: COPY } })).to.deep.equal([]);
      expect(await h.find('slug_redirects', { filter: { entryId: COPY } })).to.deep.equal([]);
      // A deleted entry's schedule is gone with it.
      expect(await h.find('revisions', { filter: { projectId: PROJECT, status: 'scheduled' } })).to.deep.equal([]);
      // Other entries are untouched.
      // Both were last changed at the same instant: the tie goes by id, in the sort's direction.
      expect((await h.find('entries', { filter: { projectId: PROJECT, formSetId: BLOG }, sort: [['updatedAt', 'desc']] })).map((e) => e['entryId'])).to.deep.equal([OTHER, ENTRY]);
      expect((await h.find('revisions', { filter: { entryId: ENTRY }, sort: [['revision', 'asc']] })).map((r) => r['revisionId'])).to.deep.equal([R1, R2]);
      expect(await revision(O1)).not.to.equal(null);
    });

    it('deletes an entry created, edited and deleted within one batch', async () => {
      await entry(ENTRY, { type: 'create', entryId: ENTRY, projectId: PROJECT, formSetId: BLOG, slug: 'brief', initialRevision: { revisionId: R1, snapshot: {} } });
      await entry(ENTRY, { type: 'saveRevision', entryId: ENTRY, revisionId: R2, snapshot: { title: { en: 'x' } } });
      await entry(ENTRY, { type: 'delete', entryId: ENTRY });
      await h.project();
      expect(await h.find('entries')).to.deep.equal([]);
      expect(await h.find('revisions')).to.deep.equal([]);
    });
  });

  describe('masters', () => {
    it('holds records in display order with labels and parents, and the time it was published to the site', async () => {
      const createdAt = await master({
        type: 'create_master',
        masterId: MASTER,
        projectId: PROJECT,
        key: 'blog_category',
        name: 'Blog category',
        records: [
          { value: 'tips', labels: { en: 'Tips', ja: 'ヒント' }, order: 1 },
          { value: 'news', labels: { en: 'News', ja: 'ニュース' }, order: 0 },
          { value: 'tech', labels: { en: 'Tech' }, parent: 'tips', order: 0 },
        ],
      });
      await h.project();
      expect(await h.doc('masters', MASTER)).to.deep.equal({
        masterId: MASTER,
        projectId: PROJECT,
        key: 'blog_category',
        name: 'Blog category',
        records: [
          { value: 'news', labels: { en: 'News', ja: 'ニュース' }, order: 0, parent: null },
          { value: 'tips', labels: { en: 'Tips', ja: 'ヒント' }, order: 1, parent: null },
          { value: 'tech', labels: { en: 'Tech' }, order: 0, parent: 'tips' },
        ],
        recordCount: 3,
        sitePublishedAt: null,
        createdAt,
        updatedAt: createdAt,
      });

      await master({ type: 'create_master_record', record: { value: 'ai', labels: { en: 'AI' }, parent: 'tips' } });
      await master({ type: 'update_master_record', value: 'news', labels: { en: 'Announcements' }, order: 5 });
      await master({ type: 'rename_master', name: 'Categories' });
      const publishedAt = await master({ type: 'publish_master' });
      await h.project();
      const published = await h.doc('masters', MASTER);
      expect(published).to.deep.include({ name: 'Categories', recordCount: 4, sitePublishedAt: publishedAt, updatedAt: publishedAt, createdAt });
      expect((published!['records'] as Array<{ value: string }>).map((r) => r.value)).to.deep.equal(['tips', 'tech', 'ai', 'news']);
      expect((await h.find('masters', { filter: { projectId: PROJECT, key: 'blog_category' } })).map((m) => m['masterId'])).to.deep.equal([MASTER]);

      await master({ type: 'remove_master_record', value: 'ai' });
      await master({ type: 'update_master_tree', nodes: [{ value: 'news' }, { value: 'tips' }, { value: 'tech' }] });
      await master({ type: 'unpublish_master' });
      await h.project();
      const flat = await h.doc('masters', MASTER);
      expect(flat).to.deep.include({ sitePublishedAt: null, recordCount: 3 });
      expect(flat?.['records']).to.deep.equal([
        { value: 'news', labels: { en: 'Announcements' }, order: 0, parent: null },
        { value: 'tips', labels: { en: 'Tips', ja: 'ヒント' }, order: 1, parent: null },
        { value: 'tech', labels: { en: 'Tech' }, order: 2, parent: null },
      ]);
    });
  });

  it('a rebuild from the log gives the same documents as the live projector', async () => {
    await formSet(BLOG, { type: 'create_form_set', projectId: PROJECT, definition: blogDefinition() });
    await formSet(SCRATCH, { type: 'create_form_set', projectId: PROJECT, definition: blogDefinition(SCRATCH, 'scratch') });
    await formSet(BLOG, { type: 'update_form_set', definition: { ...blogDefinition(), name: 'Posts' } });
    await formSet(SCRATCH, { type: 'delete_form_set' });
    await master({ type: 'create_master', masterId: MASTER, projectId: PROJECT, key: 'tags', name: 'Tags', records: [{ value: 'a', labels: { en: 'A' } }] });
    await master({ type: 'publish_master' });
    await entry(ENTRY, { type: 'create', entryId: ENTRY, projectId: PROJECT, formSetId: BLOG, slug: 'one', initialRevision: { revisionId: R1, snapshot: { title: { en: '1' } } } });
    await entry(ENTRY, { type: 'submitForReview', entryId: ENTRY, revisionId: R1 });
    await entry(ENTRY, { type: 'approve', entryId: ENTRY, revisionId: R1 });
    await h.project();
    await entry(ENTRY, { type: 'saveRevision', entryId: ENTRY, revisionId: R2, snapshot: { title: { en: '2' } } });
    await entry(ENTRY, { type: 'submitForReview', entryId: ENTRY, revisionId: R2 });
    await entry(ENTRY, { type: 'reject', entryId: ENTRY, revisionId: R2, reason: 'no' });
    await entry(ENTRY, { type: 'reopen', entryId: ENTRY, revisionId: R2 });
    await entry(ENTRY, { type: 'submitForReview', entryId: ENTRY, revisionId: R2 });
    await entry(ENTRY, { type: 'publish', entryId: ENTRY, revisionId: R2, revision: 2 });
    await entry(ENTRY, { type: 'rename', entryId: ENTRY, slug: 'uno' });
    await entry(OTHER, { type: 'create', entryId: OTHER, projectId: PROJECT, formSetId: BLOG, slug: 'gone', initialRevision: { revisionId: O1, snapshot: {} } });
    await entry(OTHER, { type: 'rename', entryId: OTHER, slug: 'going' });
    await h.project();
    await entry(OTHER, { type: 'delete', entryId: OTHER });
    await h.project();

    const live = await dumpReadModels(h.store, [content]);
    const result = await startRebuild({ projection: content, log: h.log, store: h.store, clock: h.clock, logger: silentLogger, dropGraceMs: 0 }).result;
    expect(result).to.include({ generation: 2, previousGeneration: 1 });
    expect(await h.store.activeGeneration('content')).to.equal(2);
    const rebuilt = await dumpReadModels(h.store, [content]);
    expect(rebuilt).to.deep.equal(live);
    const collections = (rebuilt['content'] as { collections: Record<string, unknown[]> }).collections;
    expect(collections['entries']).to.have.length(1);
    expect(collections['revisions']).to.have.length(2);
    expect(collections['slug_redirects']).to.have.length(1);
    expect(collections['form_sets']).to.have.length(1);
    expect(collections['masters']).to.have.length(1);
  });
});
