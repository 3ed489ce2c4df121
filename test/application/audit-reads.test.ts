import { expect } from 'chai';
import { auditTrail } from '../../projections/audit-trail.ts';
import { ContentReads } from '../../src/application/content-reads.ts';
import type { ProjectView } from '../../src/application/content-views.ts';
import { entryStream } from '../../src/domain/content/entry/entry-events.ts';
import { EventNotInLogError } from '../../src/event-store/event-store.ts';
import { encodePosition } from '../../src/event-store/position.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { projectionHarness } from '../support/projection-harness.ts';
import { ReadModelRebuildingError } from '../../src/application/application-errors.ts';
import { applicationErrorToHttp } from '../../src/http/errors/application-error-to-http.ts';

const PROJECT = '00000000-0000-4000-8000-000000000001';
const OTHER_PROJECT = '00000000-0000-4000-8000-000000000002';
const FORM_SET = '00000000-0000-4000-8000-000000000010';
const ENTRY = '00000000-0000-4000-8000-000000000020';
const REVISION = '00000000-0000-4000-8000-000000000030';
const editor = { actor: { type: 'user' as const, id: 'u-editor' } };
const reviewer = { actor: { type: 'user' as const, id: 'u-reviewer' } };

/**
 * The audit trail is an index of the log (audit-trail version 6): the project's audit log and an entry's history
 * page the index and read the page's events from the log by position.
 */
describe('audit reads: records are the events, read from the log at the positions the audit trail files', () => {
  it('answers the audit log from the log, newest first, by actor and time window; a position the log no longer holds is an error, not a gap', async () => {
    const h = projectionHarness(auditTrail);
    try {
      const scope = { projectId: PROJECT, formSetId: FORM_SET, entryId: ENTRY };
      h.clock.set('2026-11-22T10:00:00.000Z');
      await h.log.append(entryStream(ENTRY), [{ type: 'entry.created', data: { ...scope, slug: 'hello' } }, { type: 'entry.revision-saved', data: { ...scope, revisionId: REVISION, revision: 1, snapshot: { title: { en: 'Hi' } }, savedAt: '2026-11-22T10:00:00.000Z' } }], 'no_stream', editor);
      h.clock.set('2026-11-22T11:00:00.000Z');
      await h.log.append(entryStream(ENTRY), [{ type: 'entry.revision-submitted', data: { ...scope, revisionId: REVISION, revision: 1 } }], 'stream_exists', editor);
      h.clock.set('2026-11-22T12:00:00.000Z');
      await h.log.append(entryStream(ENTRY), [{ type: 'entry.revision-published', data: { ...scope, revisionId: REVISION, revision: 1, publishedAt: '2026-11-22T12:00:00.000Z', trigger: 'publish' } }], 'stream_exists', reviewer);
      await h.project();
      const project = { projectId: PROJECT } as ProjectView;
      const reads = new ContentReads(new ReadModelReader(h.store), h.log);
      const page = await reads.auditLog(project, { limit: 10 });
      expect(page.items.map((item) => [item.type, item.actor.id, item.revisionId])).to.deep.equal([
        ['entry.revision-published', 'u-reviewer', REVISION],
        ['entry.revision-submitted', 'u-editor', REVISION],
        ['entry.revision-saved', 'u-editor', REVISION],
        ['entry.created', 'u-editor', null],
      ]);
      const events = [];
      for await (const event of h.log.readStream(entryStream(ENTRY))) events.push(event);
      expect(page.items[0]).to.deep.include({ position: encodePosition(events[3]!.position), eventId: events[3]!.id, occurredAt: '2026-11-22T12:00:00.000Z', streamId: entryStream(ENTRY), entryId: ENTRY });
      // The time window is one condition on the time as a number: [from, to).
      const window = await reads.auditLog(project, { limit: 10, actor: 'u-editor', from: '2026-11-22T10:30:00.000Z', to: '2026-11-22T12:00:00.000Z' });
      expect(window.items.map((item) => item.type)).to.deep.equal(['entry.revision-submitted']);
      expect((await reads.auditLog({ projectId: OTHER_PROJECT } as ProjectView, { limit: 10 })).items).to.deep.equal([]);
      // Pages of two: the same records, each once.
      const first = await reads.auditLog(project, { limit: 2 });
      const second = await reads.auditLog(project, { limit: 2, cursor: first.nextCursor! });
      expect([...first.items, ...second.items].map((item) => item.eventId)).to.deep.equal(page.items.map((item) => item.eventId));

      // An insider cut the log behind the read model (or a read model of another log was restored): the audit
      // log says so instead of leaving the event out.
      const cut = { readAt: async (positions: readonly bigint[]) => (await h.log.readAt(positions)).map((event) => (event?.type === 'entry.revision-submitted' ? null : event)) };
      const refused = await new ContentReads(new ReadModelReader(h.store), cut).auditLog(project, { limit: 10 }).then(() => null, (error: unknown) => error);
      expect(refused).to.be.instanceOf(EventNotInLogError);
      expect((refused as Error).message).to.contain(`log position ${events[2]!.position}`);
    } finally {
      await h.close();
    }
  });

  it('while an upgrade rebuilds an audit trail built by version 5 or before (other fields), answers 503, retryable, rather than in part', async () => {
    const h = projectionHarness({ ...auditTrail, version: 5 });
    try {
      await h.log.append(entryStream(ENTRY), [{ type: 'entry.created', data: { projectId: PROJECT, formSetId: FORM_SET, entryId: ENTRY, slug: 'hello' } }], 'no_stream', editor);
      await h.project();
      const refused = await new ContentReads(new ReadModelReader(h.store), h.log).auditLog({ projectId: PROJECT } as ProjectView, { limit: 10 }).then(() => null, (error: unknown) => error);
      expect(refused).to.be.instanceOf(ReadModelRebuildingError);
      const answer = applicationErrorToHttp(refused)!;
      expect(answer).to.deep.include({ status: 503, code: 'SERVICE_UNAVAILABLE', retryable: true });
      expect(answer.headers).to.deep.equal({ 'Retry-After': '5' });
    } finally {
      await h.close();
    }
  });
});
