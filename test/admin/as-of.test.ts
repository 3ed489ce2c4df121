import { expect } from 'chai';
import { pino } from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ManualClock } from '../../src/clock.ts';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { publicationHistory } from '../../projections/publication-history.ts';
import { dumpReadModels } from '../support/dump-read-models.ts';
import { eventually } from '../support/engine-fixture.ts';
import { documentedResponses } from '../support/openapi-responses.ts';
import { failure, ok } from '../mcp/support.ts';
import { articleFormSet, startAdminFixture, type AdminFixture } from './support.ts';

const HOUR = 3_600_000;
const MINUTE = 60_000;

/**
 * As-of reads against a scripted timeline on an injected clock: entry A published, entry B published, A
 * updated (a new revision published), A's slug renamed, B deleted (unpublished by delete). At instants between
 * every step the answers must be what the public API served then; a rebuild of the read model gives the same
 * answers; instants before the project existed or in the future are refused.
 */
describe('as-of reads: what the public API served at an instant', function () {
  this.timeout(60_000);
  const t0 = Date.parse('2026-03-01T08:00:00.000Z');
  const clock = new ManualClock(new Date(t0));
  let f: AdminFixture;
  let formSetId: string;
  let a: { entryId: string; rev1: string; rev2: string };
  let b: { entryId: string; rev1: string };
  let documented: Awaited<ReturnType<typeof documentedResponses>>;
  const at = (ms: number) => new Date(ms).toISOString();
  const step = (hours: number, minutes = 0) => clock.set(new Date(t0 + hours * HOUR + minutes * MINUTE));

  const get = async (route: string, operationId: string) => {
    const answer = await f.call('GET', route);
    if (answer.status === 200) documented(operationId, 200, answer.body);
    return answer;
  };
  const entryAsOf = (entryId: string, ms: number) => get(`/as-of/entries/${entryId}?at=${at(ms)}`, 'getEntryAsOf');
  const bySlugAsOf = (slug: string, ms: number) => get(`/as-of/form-sets/${formSetId}/entries/${slug}?at=${at(ms)}`, 'getEntryBySlugAsOf');
  const listAsOf = (ms: number) => get(`/as-of/form-sets/${formSetId}/entries?at=${at(ms)}`, 'listFormSetEntriesAsOf');
  const workflowAsOf = (entryId: string, ms: number) => get(`/entries/${entryId}/workflow?at=${at(ms)}`, 'getEntryWorkflowAsOf');

  const publishNew = async (slug: string, title: string) => {
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug, fields: { title } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const revision = created.body.revision;
    expect((await f.call('POST', `/revisions/${revision.id}/submit`, { body: {} })).status).to.equal(200);
    expect((await f.call('POST', `/revisions/${revision.id}/publish`, { body: { revision: revision.revision } })).status).to.equal(200);
    return { entryId: created.body.entry.id as string, rev1: revision.id as string };
  };

  before(async () => {
    f = await startAdminFixture({ clock });
    documented = await documentedResponses(f.service.url);
    formSetId = (await f.call('POST', '/form-sets', { body: articleFormSet })).body.id;
    step(1); // A published at t0+1h
    a = { ...(await publishNew('alpha', 'Alpha, first words')), rev2: '' };
    step(2); // B published at t0+2h
    b = await publishNew('beta', 'Beta');
    step(3); // A's second revision: saved at 3h, submitted at 3h01, published at 3h02
    const saved = await f.call('POST', `/entries/${a.entryId}/revisions`, { body: { fields: { title: { en: 'Alpha, second words' } } } });
    expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
    a.rev2 = saved.body.id;
    step(3, 1);
    expect((await f.call('POST', `/revisions/${a.rev2}/submit`, { body: {} })).status).to.equal(200);
    step(3, 2);
    expect((await f.call('POST', `/revisions/${a.rev2}/publish`, { body: { revision: 2 } })).status).to.equal(200);
    step(4); // A renamed
    expect((await f.call('PATCH', `/entries/${a.entryId}/slug`, { body: { slug: 'alpha-renamed' } })).status).to.equal(200);
    step(5); // B deleted: unpublished
    expect((await f.call('DELETE', `/entries/${b.entryId}`)).status).to.equal(204);
    step(6);
  });
  after(() => f?.stop());

  /** Every answer at the instants between steps, for comparing before and after a rebuild. */
  async function everything(): Promise<unknown[]> {
    const answers: unknown[] = [];
    for (const ms of [t0 + 30 * MINUTE, t0 + 1.5 * HOUR, t0 + 2.5 * HOUR, t0 + 3 * HOUR + 90_000, t0 + 3.5 * HOUR, t0 + 4.5 * HOUR, t0 + 5.5 * HOUR]) {
      for (const answer of [await entryAsOf(a.entryId, ms), await entryAsOf(b.entryId, ms), await bySlugAsOf('alpha', ms), await bySlugAsOf('alpha-renamed', ms), await listAsOf(ms), await workflowAsOf(a.entryId, ms)]) {
        answers.push({ status: answer.status, body: answer.body });
      }
    }
    return answers;
  }

  it('between every step, answers what was live: entry by id and by slug (revision, values, who published it), the form set\'s list', async () => {
    const agent = { type: 'agent', id: f.project.agentKey.keyId };
    // Before anything was published.
    expect((await entryAsOf(a.entryId, t0 + 30 * MINUTE)).status).to.equal(404);
    expect((await listAsOf(t0 + 30 * MINUTE)).body.items).to.deep.equal([]);

    // A live (revision 1, first words), B not yet.
    let answer = await entryAsOf(a.entryId, t0 + 1.5 * HOUR);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body).to.deep.include({ at: at(t0 + 1.5 * HOUR), formSetId, entry: { id: a.entryId, slug: 'alpha' }, liveSince: at(t0 + HOUR) });
    expect(answer.body.revision).to.deep.equal({ id: a.rev1, revision: 1, publishedAt: at(t0 + HOUR), publishedBy: agent, trigger: 'publish' });
    expect(answer.body.data).to.deep.equal({ title: { en: 'Alpha, first words' } });
    expect((await entryAsOf(b.entryId, t0 + 1.5 * HOUR)).status).to.equal(404);
    expect((await listAsOf(t0 + 1.5 * HOUR)).body.items.map((i: { entry: { slug: string } }) => i.entry.slug)).to.deep.equal(['alpha']);

    // Both live; the list most recently published first.
    expect((await listAsOf(t0 + 2.5 * HOUR)).body.items.map((i: { entry: { slug: string } }) => i.entry.slug)).to.deep.equal(['beta', 'alpha']);
    expect((await bySlugAsOf('beta', t0 + 2.5 * HOUR)).body.data).to.deep.equal({ title: { en: 'Beta' } });

    // A's second revision saved and submitted (3h01) but not yet published: the first one is still served.
    expect((await entryAsOf(a.entryId, t0 + 3 * HOUR + 90_000)).body.revision.id).to.equal(a.rev1);
    // ... and published at 3h02: the update is served.
    answer = await bySlugAsOf('alpha', t0 + 3.5 * HOUR);
    expect(answer.body.revision).to.include({ id: a.rev2, revision: 2, publishedAt: at(t0 + 3 * HOUR + 2 * MINUTE) });
    expect(answer.body.data).to.deep.equal({ title: { en: 'Alpha, second words' } });
    expect((await listAsOf(t0 + 3.5 * HOUR)).body.items.map((i: { entry: { slug: string } }) => i.entry.slug)).to.deep.equal(['alpha', 'beta']);

    // Renamed: served at the new slug since 4h, same revision; nothing at the old slug.
    answer = await entryAsOf(a.entryId, t0 + 4.5 * HOUR);
    expect(answer.body).to.deep.include({ entry: { id: a.entryId, slug: 'alpha-renamed' }, liveSince: at(t0 + 4 * HOUR) });
    expect(answer.body.revision.id).to.equal(a.rev2);
    expect((await bySlugAsOf('alpha', t0 + 4.5 * HOUR)).status).to.equal(404);
    expect((await bySlugAsOf('alpha-renamed', t0 + 4.5 * HOUR)).body.entry.id).to.equal(a.entryId);
    expect((await bySlugAsOf('alpha-renamed', t0 + 3.5 * HOUR)).status).to.equal(404);

    // B deleted at 5h: no longer served, though it was before.
    expect((await entryAsOf(b.entryId, t0 + 5.5 * HOUR)).status).to.equal(404);
    expect((await entryAsOf(b.entryId, t0 + 4.5 * HOUR)).body.data).to.deep.equal({ title: { en: 'Beta' } });
    expect((await listAsOf(t0 + 5.5 * HOUR)).body.items.map((i: { entry: { slug: string } }) => i.entry.slug)).to.deep.equal(['alpha-renamed']);
    // At the exact instant of a step, the step has happened ([from, to)).
    expect((await entryAsOf(b.entryId, t0 + 5 * HOUR)).status).to.equal(404);
    expect((await entryAsOf(b.entryId, t0 + 2 * HOUR)).status).to.equal(200);
  });

  it('the workflow state at each instant: statuses, who saved and submitted, the live revision, deleted', async () => {
    const agent = { type: 'agent', id: f.project.agentKey.keyId };
    expect((await workflowAsOf(a.entryId, t0 + 30 * MINUTE)).status).to.equal(404);
    let state = (await workflowAsOf(a.entryId, t0 + 3 * HOUR + 90_000)).body;
    expect(state).to.deep.include({ slug: 'alpha', deleted: false, revisionCount: 2, live: { revisionId: a.rev1, revision: 1, publishedAt: at(t0 + HOUR) } });
    expect(state.latest).to.deep.include({ revisionId: a.rev2, status: 'pending_review', savedBy: agent, submittedBy: agent, savedAt: at(t0 + 3 * HOUR) });
    expect(state.lastEvent).to.include({ type: 'entry.revision-submitted', occurredAt: at(t0 + 3 * HOUR + MINUTE) });
    state = (await workflowAsOf(a.entryId, t0 + 4.5 * HOUR)).body;
    expect(state).to.deep.include({ slug: 'alpha-renamed', previousSlugs: ['alpha'] });
    expect(state.latest.status).to.equal('published');
    const deleted = (await workflowAsOf(b.entryId, t0 + 5.5 * HOUR)).body;
    expect(deleted).to.deep.include({ deleted: true, live: null });
  });

  it('refuses instants before the project existed and in the future, and a malformed instant, with 400 naming at', async () => {
    const before = await entryAsOf(a.entryId, t0 - HOUR);
    expect(before.status).to.equal(400);
    expect(before.body.error.message).to.match(/^at: .* is before the project existed \(it was created at /);
    const future = await listAsOf(t0 + 7 * HOUR);
    expect(future.status).to.equal(400);
    expect(future.body.error.message).to.match(/^at: .* is in the future/);
    const malformed = await f.call('GET', `/as-of/entries/${a.entryId}?at=yesterday`);
    expect(malformed.status).to.equal(400);
    expect(malformed.body.error.message).to.match(/^at: /);
    expect((await f.call('GET', `/as-of/entries/${a.entryId}`)).status).to.equal(400);
  });

  it('a rebuild of the publication history gives the same answers, document for document', async () => {
    const answers = await everything();
    const store = f.service.stores.readModels;
    // The live generation stores its progress past the events it does not handle once the log is quiet: the
    // rebuild's checkpoint is the head.
    const head = await f.service.log.headPosition();
    await eventually(async () => (await store.getGeneration('publication-history', (await store.activeGeneration('publication-history'))!))?.checkpoint, (checkpoint) => checkpoint === head);
    const dumped = await dumpReadModels(store, [publicationHistory]);
    const rebuild = startRebuild({ projection: publicationHistory, log: f.service.log, store, clock: { now: () => new Date() }, logger: pino({ level: 'silent' }) });
    const result = await rebuild.result;
    expect(await dumpReadModels(store, [publicationHistory])).to.deep.equal(dumped);
    // The service has followed the swap by the time the replaced generation goes (its grace is for that).
    await rebuild.dropped;
    expect(f.service.supervisor!.liveGeneration('publication-history')).to.equal(result.generation);
    expect(await everything()).to.deep.equal(answers);
  });

  it('through MCP: get_entry_as_of answers by id or by slug with the workflow state; list_entries_as_of lists; a bad instant is explained', async () => {
    const mcp = new Client({ name: 'as-of-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${f.service.url}/admin/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${f.project.agentKey.key}` } } }));
    try {
      const byId = await ok(mcp, 'get_entry_as_of', { entryId: a.entryId, at: at(t0 + 3.5 * HOUR), includeWorkflow: true });
      expect(byId.served.data).to.deep.equal({ title: { en: 'Alpha, second words' } });
      expect(byId.workflow.latest.status).to.equal('published');
      const bySlug = await ok(mcp, 'get_entry_as_of', { formSetSlug: 'articles', slug: 'beta', at: at(t0 + 2.5 * HOUR) });
      expect(bySlug.served.entry.id).to.equal(b.entryId);
      const notLive = await ok(mcp, 'get_entry_as_of', { entryId: b.entryId, at: at(t0 + 5.5 * HOUR) });
      expect(notLive.served).to.equal(null);
      expect(notLive.note).to.match(/not live/);
      const list = await ok(mcp, 'list_entries_as_of', { formSetId, at: at(t0 + 2.5 * HOUR) });
      expect(list.items.map((i: { entry: { slug: string } }) => i.entry.slug)).to.deep.equal(['beta', 'alpha']);
      expect(await failure(mcp, 'get_entry_as_of', { entryId: a.entryId, at: at(t0 - HOUR) })).to.match(/^VALIDATION_ERROR \(HTTP 400\): at: .* before the project existed/);
    } finally {
      await mcp.close();
    }
  });
});
