import { expect } from 'chai';
import {
  duplicateEntry,
  entryDecider,
  latestRevision,
  liveRevision,
  publishOutcome,
  scheduledRevision,
  type EntryCommand,
} from '../../../../src/domain/content/entry/entry-decider.ts';
import { entryEvents, entryStream, type EntryEvent } from '../../../../src/domain/content/entry/entry-events.ts';
import { ENTRY_PERMISSIONS, ENTRY_ACTIONS, mayPerform } from '../../../../src/domain/content/entry/entry-workflow.ts';
import { ENTRY, FORM_SET, NOW, OTHER_PROJECT, PROJECT, R1, R2, R3, context, ev, given, id, scope, stateOf } from './support.ts';

const created = [ev.created(), ev.saved(R1, 1, { title: 'Hello' })];
const live1 = [...created, ev.submitted(R1, 1), ev.published(R1, 1, 'approve', { publishedAt: '2026-05-02T00:00:00.000Z' })];

describe('entry decider', () => {
  describe('events', () => {
    it('are registered once each, version 1, and the stream is entry-{id}', () => {
      expect(new Set(entryEvents.map((e) => e.type)).size).to.equal(entryEvents.length);
      expect(entryEvents.every((e) => e.version === 1)).to.equal(true);
      expect(entryEvents.map((e) => e.type)).to.include.members([
        'entry.created',
        'entry.revision-saved',
        'entry.revision-submitted',
        'entry.revision-approved',
        'entry.revision-published',
        'entry.revision-rejected',
        'entry.revision-withdrawn',
        'entry.revision-reopened',
        'entry.slug-changed',
        'entry.import-metadata-set',
        'entry.assigned',
        'entry.deleted',
      ]);
      expect(entryStream(ENTRY)).to.equal(`entry-${ENTRY}`);
    });

    it('every event names entryId, projectId and formSetId', () => {
      for (const definition of entryEvents) {
        const shape = (definition.schema as unknown as { shape: Record<string, unknown> }).shape;
        expect(shape, definition.type).to.include.keys('entryId', 'projectId', 'formSetId');
      }
    });
  });

  describe('create', () => {
    const create: EntryCommand = { type: 'create', entryId: ENTRY, projectId: PROJECT, formSetId: FORM_SET, slug: 'hello-world', initialRevision: { revisionId: R1, snapshot: { title: 'Hello' } } };

    it('appends entry.created and revision 1 with the full snapshot, savedAt = now', () => {
      given([]).when(create, context('tenant_user')).then([ev.created(), ev.saved(R1, 1, { title: 'Hello' }, NOW.toISOString())]);
    });

    it('without fields: only entry.created', () => {
      given([]).when({ type: 'create', entryId: ENTRY, projectId: PROJECT, formSetId: FORM_SET, slug: 'hello-world' }, context('agent(content)')).then([ev.created()]);
    });

    it('carries import metadata', () => {
      given([])
        .when({ ...create, importPath: '/blog/hello', external: { sourceType: 'wordpress', entityType: 'post', externalId: '42' } } as EntryCommand)
        .then([ev.created('hello-world', { importPath: '/blog/hello', external: { sourceType: 'wordpress', entityType: 'post', externalId: '42' } }), ev.saved(R1, 1, { title: 'Hello' }, NOW.toISOString())]);
    });

    it('refuses a bad slug with VALIDATION_ERROR naming the rule', () => {
      given([]).when({ ...create, slug: 'Hello World' } as EntryCommand).thenFails('VALIDATION_ERROR', /lowercase letters/);
    });

    it('refuses fields that are not an object', () => {
      given([]).when({ ...create, initialRevision: { revisionId: R1, snapshot: ['x'] as unknown as Record<string, unknown> } } as EntryCommand).thenFails('VALIDATION_ERROR', /fields/);
    });

    it('refuses an id in use, also a deleted one (CONFLICT)', () => {
      given(created).when(create).thenFails('CONFLICT', /already exists/);
      given([...created, ev.deleted()]).when(create).thenFails('CONFLICT', /deleted/);
    });

    it("an agent key cannot create in another project's form set (NOT_FOUND)", () => {
      given([]).when({ ...create, projectId: OTHER_PROJECT } as EntryCommand, context('agent(full)')).thenFails('NOT_FOUND');
    });

    it('the scheduler cannot create', () => {
      given([]).when(create, context('scheduler')).thenFails('FORBIDDEN');
    });
  });

  describe('saveRevision', () => {
    const save = (revisionId: string, expectedRevision?: number, snapshot: Record<string, unknown> = { title: 'Edited' }): EntryCommand => ({
      type: 'saveRevision',
      entryId: ENTRY,
      revisionId,
      snapshot,
      ...(expectedRevision === undefined ? {} : { expectedRevision }),
    });

    it('appends the next revision number as a draft, for tenant_user and agents alike', () => {
      for (const who of ['tenant_admin', 'tenant_user', 'agent(full)', 'agent(content)', 'agent(schema)'] as const) {
        given(created).when(save(R2, 1), context(who)).then([ev.saved(R2, 2, { title: 'Edited' }, NOW.toISOString())]);
      }
    });

    it('a stale expectedRevision is REVISION_CONFLICT with a hint to reload', () => {
      const error = given([...created, ev.saved(R2, 2)]).when(save(R3, 1)).thenFails('REVISION_CONFLICT', /based on revision 1.*latest revision .* is 2/);
      expect(error.hint).to.match(/reload/i);
    });

    it('without expectedRevision, always a new revision', () => {
      given([...created, ev.saved(R2, 2)]).when(save(R3)).then([ev.saved(R3, 3, { title: 'Edited' }, NOW.toISOString())]);
    });

    it('the first save of an entry created without fields expects revision 0', () => {
      given([ev.created()]).when(save(R1, 0)).then([ev.saved(R1, 1, { title: 'Edited' }, NOW.toISOString())]);
    });

    it('refuses a revision id already used (CONFLICT)', () => {
      given(created).when(save(R1)).thenFails('CONFLICT', /already used/);
    });

    it('editing a published entry saves a new draft and leaves the live revision as it is', () => {
      const events = given(live1).when(save(R2, 1)).then([ev.saved(R2, 2, { title: 'Edited' }, NOW.toISOString())]);
      const state = stateOf([...live1, ...events]);
      expect(liveRevision(state)).to.deep.equal({ revisionId: R1, revision: 1, publishedAt: '2026-05-02T00:00:00.000Z' });
      expect(latestRevision(state)).to.include({ revisionId: R2, revision: 2, status: 'draft' });
    });

    it('over a rejected revision: a new draft; the rejected one stays rejected', () => {
      const history = [...created, ev.submitted(R1, 1), ev.rejected(R1, 1, 'pending_review', 'too short')];
      const events = given(history).when(save(R2, 1)).events();
      expect(latestRevision(stateOf(history))).to.include({ status: 'rejected', rejectionReason: 'too short' });
      expect(latestRevision(stateOf([...history, ...events]))).to.include({ revisionId: R2, status: 'draft' });
    });

    it('refuses while the latest revision is pending_review or scheduled (CONFLICT, hint: withdraw)', () => {
      const error = given([...created, ev.submitted(R1, 1)]).when(save(R2)).thenFails('CONFLICT', /pending_review/);
      expect(error.hint).to.match(/withdraw/i);
      given([...created, ev.submitted(R1, 1), ev.approved(R1, 1, '2026-07-01T00:00:00.000Z')]).when(save(R2)).thenFails('CONFLICT', /scheduled/);
    });

    it('the decided snapshot is a copy: later mutation of the command does not reach the event', () => {
      const snapshot = { title: 'A', tags: ['x'] };
      const [event] = given(created).when(save(R2, 1, snapshot)).events();
      snapshot.tags.push('y');
      expect((event!.data as { snapshot: unknown }).snapshot).to.deep.equal({ title: 'A', tags: ['x'] });
    });
  });

  describe('publish (POST /revisions/{id}/publish)', () => {
    const publish = (revisionId: string, revision: number): EntryCommand => ({ type: 'publish', entryId: ENTRY, revisionId, revision });

    it('save, submit, publish by an agent: published, no supersedes on the first publish', () => {
      given([...created, ev.submitted(R1, 1)]).when(publish(R1, 1), context('agent(content)')).then([ev.published(R1, 1, 'publish')]);
    });

    it('a newer publish supersedes the live revision in the same event', () => {
      const history = [...live1, ev.saved(R2, 2), ev.submitted(R2, 2)];
      const events = given(history).when(publish(R2, 2)).then([ev.published(R2, 2, 'publish', { supersedes: R1 })]);
      const state = stateOf([...history, ...events]);
      expect(latestRevision(state)).to.include({ revisionId: R2, status: 'published' });
      expect(liveRevision(state)?.revisionId).to.equal(R2);
      expect(publishOutcome(state, R2, events)).to.deep.equal({ outcome: 'published', revisionId: R2, revision: 2, publishedAt: NOW.toISOString(), supersedes: R1 });
    });

    it('approve without a date supersedes the same way', () => {
      given([...live1, ev.saved(R2, 2), ev.submitted(R2, 2)])
        .when({ type: 'approve', entryId: ENTRY, revisionId: R2 })
        .then([ev.published(R2, 2, 'approve', { supersedes: R1 })]);
    });

    it('already published: no events, and publishOutcome says already_published', () => {
      given(live1).when(publish(R1, 1)).thenNothing();
      expect(publishOutcome(stateOf(live1), R1, [])).to.deep.equal({ outcome: 'already_published', revisionId: R1, revision: 1, publishedAt: '2026-05-02T00:00:00.000Z' });
    });

    it('already published while a newer draft exists: still no events (a retried publish is not stale)', () => {
      given([...live1, ev.saved(R2, 2)]).when(publish(R1, 1)).thenNothing();
    });

    it('publishOutcome is null for a revision that is not live', () => {
      expect(publishOutcome(stateOf(created), R1)).to.equal(null);
      expect(publishOutcome(stateOf([...live1, ev.saved(R2, 2)]), R2)).to.equal(null);
    });

    it('a stale revision (not the latest), as the read model records it, is REVISION_CONFLICT with a hint to reload', () => {
      const history = [...created, ev.submitted(R1, 1), ev.rejected(R1, 1, 'pending_review'), ev.saved(R2, 2), ev.submitted(R2, 2)];
      const recorded = { revisionId: R1, revision: 1, status: 'rejected' as const };
      const error = given(history).when({ ...publish(R1, 1), recorded } as EntryCommand).thenFails('REVISION_CONFLICT', /1 \(rejected\) is not the latest revision.*latest is revision 2/);
      expect(error.hint).to.match(/reload/i);
    });

    it('an older revision the command does not describe is NOT_FOUND: the aggregate keeps only the latest and live ones', () => {
      const history = [...created, ev.submitted(R1, 1), ev.rejected(R1, 1, 'pending_review'), ev.saved(R2, 2), ev.submitted(R2, 2)];
      given(history).when(publish(R1, 1)).thenFails('NOT_FOUND');
      // A recorded revision must be older than the latest one to count.
      given(history).when({ ...publish(id(77), 2), recorded: { revisionId: id(77), revision: 2, status: 'draft' } } as EntryCommand).thenFails('NOT_FOUND');
    });

    it('a revision number that does not match the id is REVISION_CONFLICT', () => {
      given([...created, ev.saved(R2, 2), ev.submitted(R2, 2)]).when(publish(R2, 1)).thenFails('REVISION_CONFLICT', /is revision 2, not 1/);
      given(live1).when(publish(R1, 2)).thenFails('REVISION_CONFLICT');
    });

    it('an unknown revision id is NOT_FOUND', () => {
      given(created).when(publish(id(999), 1)).thenFails('NOT_FOUND');
    });

    it('a non-positive revision number is VALIDATION_ERROR', () => {
      given(created).when(publish(R1, 0)).thenFails('VALIDATION_ERROR', /revision/);
    });

    it('from draft: CONFLICT whose hint gives the flow save, submit, publish', () => {
      const error = given(created).when(publish(R1, 1)).thenFails('CONFLICT', /draft.*publish/);
      expect(error.hint).to.match(/submit/);
    });

    it('from scheduled: CONFLICT whose hint names the publish time', () => {
      const error = given([...created, ev.submitted(R1, 1), ev.approved(R1, 1, '2026-07-01T00:00:00.000Z')]).when(publish(R1, 1)).thenFails('CONFLICT', /scheduled/);
      expect(error.hint).to.include('2026-07-01T00:00:00.000Z');
    });
  });

  describe('approve with a date, and the scheduled publishing job', () => {
    const pending = [...created, ev.submitted(R1, 1)];
    const approveAt = (publishAt: unknown): EntryCommand => ({ type: 'approve', entryId: ENTRY, revisionId: R1, revision: 1, publishAt } as EntryCommand);
    const PUBLISH_AT = '2026-06-01T12:00:00.000Z';
    const scheduled = [...pending, ev.approved(R1, 1, PUBLISH_AT)];
    const job = (now: string, revisionId?: string) => ({
      command: { type: 'publishScheduled', entryId: ENTRY, ...(revisionId ? { revisionId } : {}) } as EntryCommand,
      ctx: context('scheduler', { now: new Date(now) }),
    });

    it('an offset time is stored as UTC with milliseconds', () => {
      given(pending).when(approveAt({ at: '2026-06-01T21:00:00+09:00' })).then([ev.approved(R1, 1, PUBLISH_AT)]);
    });

    it('a local time with an IANA zone is stored as UTC', () => {
      given(pending).when(approveAt({ local: '2026-06-01T14:00', timeZone: 'Europe/Berlin' })).then([ev.approved(R1, 1, PUBLISH_AT)]);
    });

    it('a publish date not after now is VALIDATION_ERROR (approve without a date publishes now)', () => {
      const error = given(pending).when(approveAt({ at: NOW.toISOString() })).thenFails('VALIDATION_ERROR', /publishAt .* not in the future/);
      expect(error.hint).to.match(/without a publish date/);
    });

    it('an invalid date is VALIDATION_ERROR naming publishAt', () => {
      given(pending).when(approveAt({ at: '2026-06-01T12:00' })).thenFails('VALIDATION_ERROR', /publishAt .*no UTC offset/);
      given(pending).when(approveAt({ local: '2026-06-01T12:00', timeZone: 'Mars/Olympus' })).thenFails('VALIDATION_ERROR', /timeZone/);
    });

    it('the state knows the scheduled revision and its publishAt', () => {
      expect(scheduledRevision(stateOf(scheduled))).to.include({ revisionId: R1, publishAt: PUBLISH_AT });
    });

    it('before publishAt: nothing', () => {
      const { command, ctx } = job('2026-06-01T11:59:59.999Z');
      given(scheduled).when(command, ctx).thenNothing();
    });

    it('at publishAt exactly: published by the job', () => {
      const { command, ctx } = job(PUBLISH_AT);
      given(scheduled).when(command, ctx).then([ev.published(R1, 1, 'schedule', { publishAt: PUBLISH_AT, publishedAt: PUBLISH_AT })]);
    });

    it('after publishAt (the job lags): published at the job time, with the approved time kept, superseding the live one', () => {
      const history = [...live1, ev.saved(R2, 2), ev.submitted(R2, 2), ev.approved(R2, 2, PUBLISH_AT)];
      const { command, ctx } = job('2026-06-01T12:04:30.000Z');
      const events = given(history).when(command, ctx).then([ev.published(R2, 2, 'schedule', { publishAt: PUBLISH_AT, publishedAt: '2026-06-01T12:04:30.000Z', supersedes: R1 })]);
      expect(liveRevision(stateOf([...history, ...events]))?.revisionId).to.equal(R2);
    });

    it('run again after publishing: nothing (no duplicate publish)', () => {
      const { command, ctx } = job('2026-06-01T12:05:00.000Z');
      given([...scheduled, ev.published(R1, 1, 'schedule', { publishAt: PUBLISH_AT })]).when(command, ctx).thenNothing();
    });

    it('naming another revision than the scheduled one: nothing', () => {
      const { command, ctx } = job('2026-06-01T13:00:00.000Z', R2);
      given(scheduled).when(command, ctx).thenNothing();
    });

    it('withdrawn or rejected (cancelled): nothing', () => {
      const { command, ctx } = job('2026-06-01T13:00:00.000Z');
      given([...scheduled, ev.withdrawn(R1, 1, 'scheduled')]).when(command, ctx).thenNothing();
      given([...scheduled, ev.rejected(R1, 1, 'scheduled')]).when(command, ctx).thenNothing();
      expect(scheduledRevision(stateOf([...scheduled, ev.withdrawn(R1, 1, 'scheduled')]))).to.equal(undefined);
    });

    it('re-approving a scheduled revision with another date is CONFLICT (withdraw first)', () => {
      given(scheduled).when(approveAt({ at: '2026-06-03T00:00:00Z' })).thenFails('CONFLICT', /scheduled: approve/);
    });
  });

  describe('reject', () => {
    const pending = [...created, ev.submitted(R1, 1)];
    it('keeps a trimmed reason', () => {
      given(pending).when({ type: 'reject', entryId: ENTRY, revisionId: R1, reason: '  needs sources ' }).then([ev.rejected(R1, 1, 'pending_review', 'needs sources')]);
    });
    it('a reason over 2000 characters is VALIDATION_ERROR', () => {
      given(pending).when({ type: 'reject', entryId: ENTRY, revisionId: R1, reason: 'x'.repeat(2001) }).thenFails('VALIDATION_ERROR', /reason/);
    });
    it('agent keys of every scope are refused (FORBIDDEN), as is tenant_user', () => {
      for (const who of ['agent(full)', 'agent(content)', 'agent(schema)', 'tenant_user'] as const) {
        given(pending).when({ type: 'reject', entryId: ENTRY, revisionId: R1 }, context(who)).thenFails('FORBIDDEN', /reject/i);
      }
    });
  });

  describe('stale workflow commands', () => {
    it('submitting an earlier draft when a newer one exists is REVISION_CONFLICT', () => {
      given([...created, ev.saved(R2, 2)]).when({ type: 'submitForReview', entryId: ENTRY, revisionId: R1, recorded: { revisionId: R1, revision: 1, status: 'draft' } }).thenFails('REVISION_CONFLICT');
    });
    it('reopening an earlier rejected revision after a newer save is REVISION_CONFLICT', () => {
      given([...created, ev.submitted(R1, 1), ev.rejected(R1, 1, 'pending_review'), ev.saved(R2, 2)])
        .when({ type: 'reopen', entryId: ENTRY, revisionId: R1, recorded: { revisionId: R1, revision: 1, status: 'rejected' } })
        .thenFails('REVISION_CONFLICT');
    });
    it('withdrawing the live revision while a newer draft exists is REVISION_CONFLICT', () => {
      given([...live1, ev.saved(R2, 2)]).when({ type: 'withdraw', entryId: ENTRY, revisionId: R1 }).thenFails('REVISION_CONFLICT');
    });
  });

  describe('rename', () => {
    const rename = (slug: string): EntryCommand => ({ type: 'rename', entryId: ENTRY, slug });

    it('appends slug-changed and keeps the old slugs for 301s', () => {
      const first = given(created).when(rename('hello-again'), context('tenant_user')).then([ev.slugChanged('hello-world', 'hello-again')]);
      const history = [...created, ...first];
      const second = given(history).when(rename('third-name')).then([ev.slugChanged('hello-again', 'third-name')]);
      const state = stateOf([...history, ...second]);
      expect(state).to.include({ slug: 'third-name' });
      expect(state.exists && state.previousSlugs).to.deep.equal(['hello-world', 'hello-again']);
    });

    it('renaming back to an old slug takes it out of the redirects', () => {
      const history = [...created, ev.slugChanged('hello-world', 'hello-again')];
      const events = given(history).when(rename('hello-world')).events();
      const state = stateOf([...history, ...events]);
      expect(state.exists && state.previousSlugs).to.deep.equal(['hello-again']);
    });

    it('the same slug: nothing', () => {
      given(created).when(rename('hello-world')).thenNothing();
    });

    it('an invalid slug: VALIDATION_ERROR naming the rule', () => {
      given(created).when(rename('-x')).thenFails('VALIDATION_ERROR', /start or end with a hyphen/);
    });
  });

  describe('import metadata', () => {
    const set = (input: { importPath?: string | null; external?: unknown }): EntryCommand => ({ type: 'setImportMetadata', entryId: ENTRY, ...input } as EntryCommand);
    const metadata = (importPath: string | null, external: unknown): EntryEvent => ({ type: 'entry.import-metadata-set', data: { ...scope, importPath, external } } as EntryEvent);

    it('sets the import path and external identity, agents included', () => {
      given(created)
        .when(set({ importPath: '/news/1', external: { sourceType: 'wp', entityType: 'post', externalId: '1' } }), context('agent(content)'))
        .then([metadata('/news/1', { sourceType: 'wp', entityType: 'post', externalId: '1' })]);
    });

    it('undefined keeps, null clears, unchanged is nothing', () => {
      const history = [...created, metadata('/news/1', { externalId: '1' })];
      given(history).when(set({ external: null })).then([metadata('/news/1', null)]);
      given(history).when(set({ importPath: '/news/1' })).thenNothing();
      given(history).when(set({ external: { externalId: '1' } })).thenNothing();
    });

    it('the spec limits hold at the edge and fail one past it, naming the field', () => {
      given(created).when(set({ external: { sourceType: 's'.repeat(50), entityType: 'e'.repeat(200), externalId: 'i'.repeat(2000) } })).events();
      given(created).when(set({ external: { sourceType: 's'.repeat(51), externalId: '1' } })).thenFails('VALIDATION_ERROR', /external\.sourceType must be at most 50/);
      given(created).when(set({ external: { entityType: 'e'.repeat(201), externalId: '1' } })).thenFails('VALIDATION_ERROR', /external\.entityType must be at most 200/);
      given(created).when(set({ external: { externalId: 'i'.repeat(2001) } })).thenFails('VALIDATION_ERROR', /external\.externalId must be at most 2000/);
      given(created).when(set({ importPath: 'p'.repeat(2001) })).thenFails('VALIDATION_ERROR', /importPath must be at most 2000/);
    });

    it('externalId is required and nothing may be empty or hold control characters', () => {
      given(created).when(set({ external: { sourceType: 'wp' } })).thenFails('VALIDATION_ERROR', /external\.externalId is required/);
      given(created).when(set({ external: { externalId: '' } })).thenFails('VALIDATION_ERROR', /external\.externalId must not be empty/);
      given(created).when(set({ importPath: '/a\nb' })).thenFails('VALIDATION_ERROR', /importPath must not contain control characters/);
    });

    it('the same limits apply on create', () => {
      given([])
        .when({ type: 'create', entryId: ENTRY, projectId: PROJECT, formSetId: FORM_SET, slug: 'x', external: { sourceType: 's'.repeat(51), externalId: '1' } })
        .thenFails('VALIDATION_ERROR', /external\.sourceType/);
    });
  });

  describe('assign (Business plan and above)', () => {
    const assign = (userId: string | null): EntryCommand => ({ type: 'assign', entryId: ENTRY, userId });

    it('below Business: PLAN_REQUIRED', () => {
      for (const plan of ['free', 'solo', 'standard'] as const) {
        given(created).when(assign('u-reviewer'), context('tenant_admin', { plan })).thenFails('PLAN_REQUIRED', /Business/);
      }
    });

    it('on Business and Enterprise: assigned, then unassigned; the same assignee is nothing', () => {
      const events = given(created).when(assign('u-reviewer'), context('tenant_user', { plan: 'enterprise' })).then([{ type: 'entry.assigned', data: { ...scope, userId: 'u-reviewer' } }]);
      const history = [...created, ...events];
      expect(stateOf(history)).to.include({ assignee: 'u-reviewer' });
      given(history).when(assign('u-reviewer')).thenNothing();
      given(history).when(assign(null)).then([{ type: 'entry.assigned', data: { ...scope, userId: null } }]);
    });

    it('an empty user id is VALIDATION_ERROR', () => {
      given(created).when(assign('')).thenFails('VALIDATION_ERROR', /userId/);
    });
  });

  describe('delete', () => {
    const del: EntryCommand = { type: 'delete', entryId: ENTRY };

    it('tenant_admin and agent keys of scope full or schema may delete; it carries every slug', () => {
      const history = [...created, ev.slugChanged('hello-world', 'renamed')];
      for (const who of ['tenant_admin', 'agent(full)', 'agent(schema)'] as const) {
        given(history).when(del, context(who)).then([ev.deleted('renamed', ['hello-world'])]);
      }
    });

    it('tenant_user and content-scope agent keys may not (FORBIDDEN)', () => {
      given(created).when(del, context('tenant_user')).thenFails('FORBIDDEN', /tenant_admin/);
      given(created).when(del, context('agent(content)')).thenFails('FORBIDDEN', /scope full or schema/);
    });

    const everyCommand: EntryCommand[] = [
      { type: 'saveRevision', entryId: ENTRY, revisionId: R2, snapshot: {} },
      { type: 'restoreRevision', entryId: ENTRY, revisionId: R2, fromRevisionId: R1 },
      { type: 'submitForReview', entryId: ENTRY, revisionId: R1 },
      { type: 'approve', entryId: ENTRY, revisionId: R1 },
      { type: 'publish', entryId: ENTRY, revisionId: R1, revision: 1 },
      { type: 'reject', entryId: ENTRY, revisionId: R1 },
      { type: 'withdraw', entryId: ENTRY, revisionId: R1 },
      { type: 'reopen', entryId: ENTRY, revisionId: R1 },
      { type: 'publishScheduled', entryId: ENTRY },
      { type: 'rename', entryId: ENTRY, slug: 'other' },
      { type: 'setImportMetadata', entryId: ENTRY, importPath: '/x' },
      { type: 'assign', entryId: ENTRY, userId: 'u' },
      { type: 'delete', entryId: ENTRY },
    ];

    it('covers every command type but create', () => {
      const types = new Set(everyCommand.map((c) => c.type));
      expect(types.size).to.equal(13);
    });

    for (const command of everyCommand) {
      it(`after delete, ${command.type} is NOT_FOUND (for every caller)`, () => {
        const history = [...live1, ev.deleted()];
        for (const who of ['tenant_admin', 'tenant_user', 'agent(full)', 'scheduler'] as const) {
          given(history).when(command, context(who)).thenFails('NOT_FOUND', /deleted/);
        }
      });
    }

    it('a never-created entry is NOT_FOUND too', () => {
      given([]).when({ type: 'rename', entryId: ENTRY, slug: 'x' }).thenFails('NOT_FOUND');
    });
  });

  describe('tenant isolation', () => {
    it("an agent key of another project gets NOT_FOUND for this project's entry", () => {
      given(created).when({ type: 'saveRevision', entryId: ENTRY, revisionId: R2, snapshot: {} }, context('agent(other project)')).thenFails('NOT_FOUND');
      given([...created, ev.submitted(R1, 1)]).when({ type: 'publish', entryId: ENTRY, revisionId: R1, revision: 1 }, context('agent(other project)')).thenFails('NOT_FOUND');
    });
    it('a command for another entry id than the stream is NOT_FOUND', () => {
      given(created).when({ type: 'rename', entryId: id(2), slug: 'x' }).thenFails('NOT_FOUND');
    });
  });

  describe('restoreRevision', () => {
    const history = [...live1, ev.saved(R2, 2, { title: 'Second' })];

    it('saves an old revision snapshot (as recorded) as a new draft, recording where it came from', () => {
      const events = given(history)
        .when({ type: 'restoreRevision', entryId: ENTRY, revisionId: R3, fromRevisionId: R1, source: { revision: 1, snapshot: { title: 'Hello' } }, expectedRevision: 2 }, context('tenant_user'))
        .then([ev.saved(R3, 3, { title: 'Hello' }, NOW.toISOString(), { restoredFrom: { revisionId: R1, revision: 1 } })]);
      const state = stateOf([...history, ...events]);
      expect(latestRevision(state)).to.include({ revisionId: R3, status: 'draft' });
      expect(latestRevision(state)?.restoredFrom).to.deep.equal({ revisionId: R1, revision: 1 });
      expect(liveRevision(state)?.revisionId).to.equal(R1);
    });

    it('an unknown source revision is NOT_FOUND; a stale expectedRevision REVISION_CONFLICT; pending_review CONFLICT', () => {
      given(history).when({ type: 'restoreRevision', entryId: ENTRY, revisionId: R3, fromRevisionId: id(555) }).thenFails('NOT_FOUND');
      given(history).when({ type: 'restoreRevision', entryId: ENTRY, revisionId: R3, fromRevisionId: R2, expectedRevision: 1 }).thenFails('REVISION_CONFLICT');
      given([...history, ev.submitted(R2, 2)]).when({ type: 'restoreRevision', entryId: ENTRY, revisionId: R3, fromRevisionId: R2 }).thenFails('CONFLICT');
    });

    it('restoring the latest revision needs no recorded source: the aggregate holds its snapshot', () => {
      given(history).when({ type: 'restoreRevision', entryId: ENTRY, revisionId: R3, fromRevisionId: R2 }).then([
        ev.saved(R3, 3, { title: 'Second' }, NOW.toISOString(), { restoredFrom: { revisionId: R2, revision: 2 } }),
      ]);
    });
  });

  describe('duplicate', () => {
    const NEW = id(2);
    const NEW_R = id(201);
    const source = [...live1, ev.saved(R2, 2, { title: 'Latest', body: { en: 'Hi', ja: 'やあ' } }), ev.slugChanged('hello-world', 'hello')];

    it('is a create of a new draft with the latest values, slug {slug}-copy, and duplicatedFrom', () => {
      const command = duplicateEntry(stateOf(source), { entryId: NEW, revisionId: NEW_R });
      expect(command).to.deep.equal({
        type: 'create',
        entryId: NEW,
        projectId: PROJECT,
        formSetId: FORM_SET,
        slug: 'hello-copy',
        initialRevision: { revisionId: NEW_R, snapshot: { title: 'Latest', body: { en: 'Hi', ja: 'やあ' } } },
        duplicatedFrom: { entryId: ENTRY, revisionId: R2, revision: 2 },
      });
      const events = entryDecider.decide(command, stateOf([]), context('tenant_user'));
      expect(events.map((e) => e.type)).to.deep.equal(['entry.created', 'entry.revision-saved']);
      expect(events[0]!.data).to.deep.include({ entryId: NEW, slug: 'hello-copy', duplicatedFrom: { entryId: ENTRY, revisionId: R2, revision: 2 } });
      const copy = stateOf(events);
      expect(latestRevision(copy)).to.include({ status: 'draft', revision: 1 });
      expect(liveRevision(copy)).to.equal(undefined);
    });

    it('copies values, not references; import metadata is not copied', () => {
      const state = stateOf([...source, { type: 'entry.import-metadata-set', data: { ...scope, importPath: '/p', external: null } }]);
      const command = duplicateEntry(state, { entryId: NEW, revisionId: NEW_R });
      expect(command.importPath).to.equal(undefined);
      ((command.initialRevision!.snapshot as { body: Record<string, string> }).body).en = 'changed';
      expect((latestRevision(state)!.snapshot as { body: Record<string, string> }).body.en).to.equal('Hi');
    });

    it('a slug over the limit once suffixed is VALIDATION_ERROR; a deleted source NOT_FOUND', () => {
      const long = 'a'.repeat(196);
      const command = duplicateEntry(stateOf([ev.created(long), ev.saved(R1, 1)]), { entryId: NEW, revisionId: NEW_R });
      given([]).when(command).thenFails('VALIDATION_ERROR', /at most 200/);
      expect(() => duplicateEntry(stateOf([...created, ev.deleted()]), { entryId: NEW, revisionId: NEW_R })).to.throw(/does not exist/);
    });
  });

  describe('permission table', () => {
    it('names every action, and only the scheduler runs the job', () => {
      expect(Object.keys(ENTRY_PERMISSIONS).sort()).to.deep.equal([...ENTRY_ACTIONS].sort());
      for (const action of ENTRY_ACTIONS) {
        expect(mayPerform({ kind: 'system', name: 'scheduler' }, action, 'any-form-set'), action).to.equal(action === 'scheduled_publish');
      }
    });
  });

  describe('evolve', () => {
    it('ignores event types it does not know', () => {
      const state = stateOf(created);
      expect(entryDecider.evolve(state, { type: 'entry.something-new', data: {} } as unknown as EntryEvent)).to.equal(state);
    });
    it('the state stays bounded: the count, the latest revision and the live reference, whatever the history length', () => {
      const history = [...live1];
      for (let n = 2; n <= 2000; n++) history.push(ev.saved(id(10_000 + n), n, { title: `v${n}` }));
      const state = stateOf(history);
      expect(state).to.include({ revisionCount: 2000 });
      expect(latestRevision(state)).to.include({ revisionId: id(12_000), revision: 2000 });
      expect(liveRevision(state)).to.include({ revisionId: R1 });
      expect(JSON.stringify(state).length).to.be.below(1000);
    });
  });
});
