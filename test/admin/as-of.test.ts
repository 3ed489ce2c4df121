import { expect } from 'chai';
import { pino } from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ManualClock, type Clock } from '../../src/clock.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { entryStream } from '../../src/domain/content/entry/entry-events.ts';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { publicationHistory } from '../../projections/publication-history.ts';
import { dumpReadModels } from '../support/dump-read-models.ts';
import { eventually } from '../support/engine-fixture.ts';
import { documentedResponses } from '../support/openapi-responses.ts';
import { failure, ok } from '../mcp/support.ts';
import { adminSession, articleFormSet, startAdminFixture, type AdminFixture } from './support.ts';

const HOUR = 3_600_000;
const MINUTE = 60_000;

type Answer = { status: number; body: any; location: string | null };

/** The public single-entry answer the as-of answer stands for (see asOfEntrySchema). */
const asPublicEntry = (asOf: any) => ({
  formSet: asOf.formSet,
  entry: asOf.entry,
  revision: { id: asOf.revision.id, revision: asOf.revision.revision, updatedAt: asOf.revision.publishedAt },
  data: asOf.data,
  mediaUrls: asOf.mediaUrls,
  widgetRoles: asOf.widgetRoles,
});

/** The public list's items the as-of list stands for. */
const asPublicItems = (items: any[]) => items.map((i) => ({ entry: i.entry, published: { revisionId: i.revision.id, revision: i.revision.revision, updatedAt: i.revision.publishedAt } }));

/**
 * As-of reads against a scripted timeline on an injected clock. At every step the public API's answers are
 * recorded (the form set's list, and each slug the timeline ever used, in the default locale and in others,
 * redirects not followed); the as-of answers at that instant and between it and the next step must be the
 * same, answer for answer: the entry's values with the public API's locale fallback, a former slug's 301 to
 * the entry's slug then, the list in the public API's order, a locale refused before it was a content locale.
 * The timeline: A published (two locales), B published (English only), A updated (saved, submitted, published
 * a minute apart), A renamed, French added to the content locales, B deleted, A renamed again, and back to its
 * first slug.
 */
describe('as-of reads: what the public API served at an instant', function () {
  this.timeout(90_000);
  const t0 = Date.parse('2026-03-01T08:00:00.000Z');
  const clock = new ManualClock(new Date(t0));
  let f: AdminFixture;
  let formSetId: string;
  let a: { entryId: string; rev1: string; rev2: string };
  let b: { entryId: string; rev1: string };
  let documented: Awaited<ReturnType<typeof documentedResponses>>;
  const at = (ms: number) => new Date(ms).toISOString();
  const step = (hours: number, minutes = 0) => clock.set(new Date(t0 + hours * HOUR + minutes * MINUTE));
  const SLUGS = ['alpha', 'alpha-renamed', 'alpha-final', 'beta'];
  const LOCALES = [undefined, 'ja', 'JA', 'fr'];
  /** Each step's instant and the public API's answers recorded then. */
  const moments: Array<{ ms: number; list: Answer; entries: Map<string, Answer> }> = [];

  let session: { token: string; headers: Record<string, string> };
  // Reads as a console session: they are many, and the agent key's rate limit is for agents.
  // Redirects are not followed: a 301 is what is checked.
  const get = async (route: string, operationId: string): Promise<Answer> => {
    const response = await fetch(`${f.service.url}/admin/v1${route}`, { headers: { authorization: `Bearer ${session.token}`, ...session.headers }, redirect: 'manual' });
    const answer = { status: response.status, body: JSON.parse(await response.text()), location: response.headers.get('location') };
    if (answer.status === 200 || answer.status === 301) documented(operationId, answer.status, answer.body);
    return answer;
  };
  const query = (ms: number, locale?: string) => `at=${at(ms)}${locale === undefined ? '' : `&locale=${locale}`}`;
  const entryAsOf = (entryId: string, ms: number, locale?: string) => get(`/as-of/entries/${entryId}?${query(ms, locale)}`, 'getEntryAsOf');
  const bySlugAsOf = (slug: string, ms: number, locale?: string) => get(`/as-of/form-sets/${formSetId}/entries/${slug}?${query(ms, locale)}`, 'getEntryBySlugAsOf');
  const listAsOf = (ms: number) => get(`/as-of/form-sets/${formSetId}/entries?at=${at(ms)}`, 'listFormSetEntriesAsOf');
  const workflowAsOf = (entryId: string, ms: number) => get(`/entries/${entryId}/workflow?at=${at(ms)}`, 'getEntryWorkflowAsOf');

  const publicGet = async (path: string): Promise<Answer> => {
    const response = await fetch(`${f.service.url}/public/p/${f.project.projectId}/v1${path}`, { redirect: 'manual' });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, location: response.headers.get('location') };
  };
  /** The public API's answers now, as the site's readers got them. */
  const record = async () => {
    const entries = new Map<string, Answer>();
    for (const slug of SLUGS) {
      for (const locale of LOCALES) entries.set(`${slug} ${locale}`, await publicGet(`/form-sets/articles/entries/${slug}${locale === undefined ? '' : `?locale=${locale}`}`));
    }
    moments.push({ ms: clock.now().getTime(), list: await publicGet('/form-sets/articles/entries'), entries });
  };

  const publishNew = async (slug: string, title: unknown, body?: unknown) => {
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug, fields: { title, ...(body === undefined ? {} : { body }) } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const revision = created.body.revision;
    expect((await f.call('POST', `/revisions/${revision.id}/submit`, { body: {} })).status).to.equal(200);
    expect((await f.call('POST', `/revisions/${revision.id}/publish`, { body: { revision: revision.revision } })).status).to.equal(200);
    return { entryId: created.body.entry.id as string, rev1: revision.id as string };
  };
  const rename = async (entryId: string, slug: string) => expect((await f.call('PATCH', `/entries/${entryId}/slug`, { body: { slug } })).status).to.equal(200);

  before(async () => {
    f = await startAdminFixture({ clock });
    documented = await documentedResponses(f.service.url);
    session = await adminSession(f);
    formSetId = (await f.call('POST', '/form-sets', { body: articleFormSet })).body.id;
    await record();
    step(1); // A published: title in English and Japanese, body in English only
    a = { ...(await publishNew('alpha', { en: 'Alpha, first words', ja: 'アルファ、最初の言葉' }, { en: 'Alpha body' })), rev2: '' };
    await record();
    step(2); // B published, English only
    b = await publishNew('beta', 'Beta');
    await record();
    step(3); // A's second revision: saved at 3h, submitted at 3h01, published at 3h02
    const saved = await f.call('POST', `/entries/${a.entryId}/revisions`, { body: { fields: { title: { en: 'Alpha, second words' }, body: { en: 'Alpha body', ja: 'アルファ本文' } } } });
    expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
    a.rev2 = saved.body.id;
    await record();
    step(3, 1);
    expect((await f.call('POST', `/revisions/${a.rev2}/submit`, { body: {} })).status).to.equal(200);
    step(3, 2);
    expect((await f.call('POST', `/revisions/${a.rev2}/publish`, { body: { revision: 2 } })).status).to.equal(200);
    await record();
    step(4); // A renamed: alpha answers 301
    await rename(a.entryId, 'alpha-renamed');
    await record();
    step(4, 30); // French added to the content locales
    const locales = await f.call('PATCH', '/project/content-locales', { token: session.token, headers: session.headers, body: { locales: ['en', 'ja', 'fr'] } });
    expect(locales.status, JSON.stringify(locales.body)).to.equal(200);
    await record();
    step(5); // B deleted: unpublished
    expect((await f.call('DELETE', `/entries/${b.entryId}`)).status).to.equal(204);
    await record();
    step(5, 30); // A renamed again: both former slugs answer 301 to the newest
    await rename(a.entryId, 'alpha-final');
    await record();
    step(6); // A renamed back to its first slug: served there again, the others redirect to it
    await rename(a.entryId, 'alpha');
    await record();
    step(7);
  });
  after(() => f?.stop());

  /** The as-of answers at `ms` that stand for the recorded public answers. */
  async function asOfAnswers(ms: number): Promise<{ list: unknown; entries: Map<string, unknown> }> {
    const list = await listAsOf(ms);
    expect(list.status, JSON.stringify(list.body)).to.equal(200);
    const entries = new Map<string, unknown>();
    for (const slug of SLUGS) {
      for (const locale of LOCALES) {
        const answer = await bySlugAsOf(slug, ms, locale);
        entries.set(`${slug} ${locale}`, answer.status === 200 ? { status: 200, body: asPublicEntry(answer.body) } : answer.status === 301 ? { status: 301, slug: answer.body.entry.slug, location: answer.location } : { status: answer.status, code: answer.body.error.code });
      }
    }
    return { list: asPublicItems(list.body.items), entries };
  }

  /** The recorded public answer in the same terms. */
  function publicTerms(answer: Answer): unknown {
    if (answer.status === 200) return { status: 200, body: answer.body };
    if (answer.status === 301) return { status: 301, slug: decodeURIComponent(answer.location!.split('/entries/')[1]!.split('?')[0]!) };
    return { status: answer.status, code: answer.body.error.code };
  }

  it('at every recorded moment, and between it and the next, answers what the public API answered: values with locale fallback, 301 for a former slug, the list in its order', async () => {
    expect(moments).to.have.length(10);
    let checked = 0;
    for (const [i, moment] of moments.entries()) {
      const next = moments[i + 1]?.ms ?? t0 + 7 * HOUR;
      for (const ms of [moment.ms, Math.floor((moment.ms + next) / 2), next - 1]) {
        const asOf = await asOfAnswers(ms);
        expect(asOf.list, `the list at ${at(ms)}`).to.deep.equal(moment.list.body.items);
        for (const [key, answer] of moment.entries) {
          const got = asOf.entries.get(key) as { status: number; slug?: string; location?: string };
          const expected = publicTerms(answer);
          expect(got.status === 301 ? { status: 301, slug: got.slug } : got, `${key} at ${at(ms)}`).to.deep.equal(expected);
          if (got.status === 301) expect(got.location).to.match(new RegExp(`/admin/v1/as-of/form-sets/${formSetId}/entries/${(expected as { slug: string }).slug}\\?at=`));
          checked++;
        }
      }
    }
    expect(checked).to.equal(10 * 3 * SLUGS.length * LOCALES.length);
  });

  it('the differences the public API made, in particular: fallback per field, a former slug redirected (not 404), the list ordered by first publication', async () => {
    // A in Japanese at 1h30: its title in Japanese, its body (English only) the default locale's.
    const ja = await entryAsOf(a.entryId, t0 + 1.5 * HOUR, 'ja');
    expect(ja.body).to.deep.include({ locale: 'ja', data: { title: 'アルファ、最初の言葉', body: 'Alpha body' } });
    // Revision 2 has no Japanese title: the English one is served in Japanese after 3h02.
    expect((await entryAsOf(a.entryId, t0 + 3.5 * HOUR, 'ja')).body.data).to.deep.equal({ title: 'Alpha, second words', body: 'アルファ本文' });
    // French was no content locale before 4h30: refused then, as the public API refused it.
    const early = await entryAsOf(a.entryId, t0 + 4 * HOUR, 'fr');
    expect(early.status).to.equal(400);
    expect(early.body.error.message).to.match(/^locale: "fr" was not a content locale of this project at /);
    expect((await entryAsOf(a.entryId, t0 + 4.5 * HOUR, 'fr')).body).to.deep.include({ locale: 'fr', data: { title: 'Alpha, second words', body: 'Alpha body' } });
    // The former slug at 4h15: 301 to the slug then, with Location the as-of URL (same at and locale).
    const moved = await bySlugAsOf('alpha', t0 + 4.25 * HOUR, 'ja');
    expect(moved.status).to.equal(301);
    expect(moved.body).to.deep.include({ formSetId, slug: 'alpha', entry: { id: a.entryId, slug: 'alpha-renamed' } });
    expect(moved.location).to.equal(`${f.service.url}/admin/v1/as-of/form-sets/${formSetId}/entries/alpha-renamed?at=${encodeURIComponent(at(t0 + 4.25 * HOUR))}&locale=ja`);
    expect(moved.body.moved).to.equal(moved.location);
    // Two renames later, the first slug leads to the newest; renamed back to it, it serves the entry again.
    expect((await bySlugAsOf('alpha', t0 + 5.75 * HOUR)).body.entry.slug).to.equal('alpha-final');
    expect((await bySlugAsOf('alpha', t0 + 6.5 * HOUR)).status).to.equal(200);
    expect((await bySlugAsOf('alpha-final', t0 + 6.5 * HOUR)).body.entry.slug).to.equal('alpha');
    // At 3h30 A (first published at 1h) comes after B (2h), though A's update is the newer publication.
    expect((await listAsOf(t0 + 3.5 * HOUR)).body.items.map((i: { entry: { slug: string }; firstPublishedAt: string }) => [i.entry.slug, i.firstPublishedAt])).to.deep.equal([
      ['beta', at(t0 + 2 * HOUR)],
      ['alpha', at(t0 + HOUR)],
    ]);
  });

  it('between every step, answers who published what and since when; the workflow state at each instant', async () => {
    const agent = { type: 'agent', id: f.project.agentKey.keyId };
    expect((await entryAsOf(a.entryId, t0 + 30 * MINUTE)).status).to.equal(404);
    let answer = await entryAsOf(a.entryId, t0 + 1.5 * HOUR);
    expect(answer.body).to.deep.include({ at: at(t0 + 1.5 * HOUR), locale: 'en', formSetId, entry: { id: a.entryId, slug: 'alpha' }, liveSince: at(t0 + HOUR) });
    expect(answer.body.formSet).to.deep.equal({ id: formSetId, slug: 'articles', name: 'Articles' });
    expect(answer.body.revision).to.deep.equal({ id: a.rev1, revision: 1, publishedAt: at(t0 + HOUR), publishedBy: agent, trigger: 'publish' });
    // Saved and submitted (3h01) but not yet published: the first revision is still served.
    expect((await entryAsOf(a.entryId, t0 + 3 * HOUR + 90_000)).body.revision.id).to.equal(a.rev1);
    answer = await entryAsOf(a.entryId, t0 + 4.5 * HOUR);
    expect(answer.body).to.deep.include({ entry: { id: a.entryId, slug: 'alpha-renamed' }, liveSince: at(t0 + 4 * HOUR) });
    expect(answer.body.revision).to.include({ id: a.rev2, publishedAt: at(t0 + 3 * HOUR + 2 * MINUTE) });
    // B deleted at 5h: served until then, not at 5h itself ([from, to)).
    expect((await entryAsOf(b.entryId, t0 + 5 * HOUR - 1)).status).to.equal(200);
    expect((await entryAsOf(b.entryId, t0 + 5 * HOUR)).status).to.equal(404);

    expect((await workflowAsOf(a.entryId, t0 + 30 * MINUTE)).status).to.equal(404);
    let state = (await workflowAsOf(a.entryId, t0 + 3 * HOUR + 90_000)).body;
    expect(state).to.deep.include({ slug: 'alpha', deleted: false, revisionCount: 2, live: { revisionId: a.rev1, revision: 1, publishedAt: at(t0 + HOUR) } });
    expect(state.latest).to.deep.include({ revisionId: a.rev2, status: 'pending_review', savedBy: agent, submittedBy: agent, savedAt: at(t0 + 3 * HOUR) });
    expect(state.lastEvent).to.include({ type: 'entry.revision-submitted', occurredAt: at(t0 + 3 * HOUR + MINUTE) });
    state = (await workflowAsOf(a.entryId, t0 + 4.5 * HOUR)).body;
    expect(state).to.deep.include({ slug: 'alpha-renamed', previousSlugs: ['alpha'] });
    expect(state.latest.status).to.equal('published');
    expect((await workflowAsOf(b.entryId, t0 + 5.5 * HOUR)).body).to.deep.include({ deleted: true, live: null });
  });

  it('refuses instants before the project existed and in the future, and a malformed instant, with 400 naming at', async () => {
    const before = await entryAsOf(a.entryId, t0 - HOUR);
    expect(before.status).to.equal(400);
    expect(before.body.error.message).to.match(/^at: .* is before the project existed \(it was created at /);
    const future = await listAsOf(t0 + 8 * HOUR);
    expect(future.status).to.equal(400);
    expect(future.body.error.message).to.match(/^at: .* is in the future/);
    const malformed = await f.call('GET', `/as-of/entries/${a.entryId}?at=yesterday`);
    expect(malformed.status).to.equal(400);
    expect(malformed.body.error.message).to.match(/^at: /);
    expect((await f.call('GET', `/as-of/entries/${a.entryId}`)).status).to.equal(400);
  });

  it('a rebuild of the publication history gives the same answers, document for document', async () => {
    const everything = async () => {
      const answers: unknown[] = [];
      for (const moment of moments) answers.push(await asOfAnswers(moment.ms + 1));
      for (const ms of [t0 + 3.5 * HOUR, t0 + 5.5 * HOUR]) answers.push((await workflowAsOf(a.entryId, ms)).body, (await entryAsOf(a.entryId, ms, 'ja')).body);
      return JSON.stringify(answers, (_, v) => (v instanceof Map ? [...v] : v));
    };
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
    expect(await everything()).to.equal(answers);
  });

  it('through MCP: get_entry_as_of by id or slug, in a locale, a former slug followed and said so; list_entries_as_of; a bad instant is explained', async () => {
    const mcp = new Client({ name: 'as-of-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${f.service.url}/admin/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${f.project.agentKey.key}` } } }));
    try {
      const byId = await ok(mcp, 'get_entry_as_of', { entryId: a.entryId, at: at(t0 + 3.5 * HOUR), locale: 'ja', includeWorkflow: true });
      expect(byId.served.data).to.deep.equal({ title: 'Alpha, second words', body: 'アルファ本文' });
      expect(byId.workflow.latest.status).to.equal('published');
      const bySlug = await ok(mcp, 'get_entry_as_of', { formSetSlug: 'articles', slug: 'beta', at: at(t0 + 2.5 * HOUR) });
      expect(bySlug.served.entry.id).to.equal(b.entryId);
      const former = await ok(mcp, 'get_entry_as_of', { formSetId, slug: 'alpha', at: at(t0 + 4.5 * HOUR) });
      expect(former.moved).to.deep.include({ slug: 'alpha', entry: { id: a.entryId, slug: 'alpha-renamed' } });
      expect(former.served.entry).to.deep.equal({ id: a.entryId, slug: 'alpha-renamed' });
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

/** A clock that moves on by a millisecond every time it is read, as a real one does between two reads. */
class TickingClock implements Clock {
  #ms: number;
  constructor(start: string) {
    this.#ms = Date.parse(start);
  }
  now(): Date {
    return new Date(this.#ms++);
  }
}

/**
 * One instant per command: the publishedAt and savedAt a decision writes are the log's occurredAt of the
 * same event, so an entry reads live at its own publication instant. On a clock that moves between two reads
 * (as every real one does) versions before this wrote publishedAt a millisecond or more before occurredAt;
 * such a history, read as written, also reads live at its publishedAt.
 */
describe('as-of reads: consistent instants', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let formSetId: string;

  before(async () => {
    f = await startAdminFixture({ clock: new TickingClock('2026-04-01T08:00:00.000Z') });
    formSetId = (await f.call('POST', '/form-sets', { body: articleFormSet })).body.id;
  });
  after(() => f?.stop());

  const create = async (slug: string) => {
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug, fields: { title: 'Now' } } });
    expect(created.status).to.equal(201);
    expect((await f.call('POST', `/revisions/${created.body.revision.id}/submit`, { body: {} })).status).to.equal(200);
    return { entryId: created.body.entry.id as string, revisionId: created.body.revision.id as string };
  };

  it('an event\'s publishedAt and savedAt are its occurredAt; the entry reads live, and published, at its publishedAt', async () => {
    const { entryId, revisionId } = await create('now');
    const published = await f.call('POST', `/revisions/${revisionId}/publish`, { body: { revision: 1 } });
    expect(published.status).to.equal(200);
    const events = await collect(f.service.log.readStream(entryStream(entryId)));
    const publish = events.find((e) => e.type === 'entry.revision-published')!;
    const save = events.find((e) => e.type === 'entry.revision-saved')!;
    expect((publish.data as { publishedAt: string }).publishedAt).to.equal(publish.metadata.occurredAt);
    expect((save.data as { savedAt: string }).savedAt).to.equal(save.metadata.occurredAt);

    const publishedAt = published.body.publishedAt as string;
    const served = await f.call('GET', `/as-of/entries/${entryId}?at=${publishedAt}`);
    expect(served.status, JSON.stringify(served.body)).to.equal(200);
    expect(served.body.liveSince).to.equal(served.body.revision.publishedAt).and.equal(publishedAt);
    const state = await f.call('GET', `/entries/${entryId}/workflow?at=${publishedAt}`);
    expect(state.body.latest).to.include({ status: 'published', publishedAt });
    expect(state.body.live).to.include({ publishedAt });
    // A millisecond before, not yet.
    expect((await f.call('GET', `/as-of/entries/${entryId}?at=${new Date(Date.parse(publishedAt) - 1).toISOString()}`)).status).to.equal(404);
  });

  it('a history written by an earlier version (publishedAt a millisecond before occurredAt) reads live at its publishedAt, unchanged', async () => {
    const { entryId, revisionId } = await create('earlier');
    const events = await collect(f.service.log.readStream(entryStream(entryId)));
    const occurredAt = f.service.log.now();
    const publishedAt = new Date(occurredAt.getTime() - 1).toISOString();
    const data = { entryId, projectId: f.project.projectId, formSetId, revisionId, revision: 1, publishedAt, trigger: 'publish' };
    const appended = await f.service.log.append(entryStream(entryId), [{ type: 'entry.revision-published', data }], events.at(-1)!.revision, { actor: { type: 'agent', id: f.project.agentKey.keyId }, occurredAt });
    await f.service.supervisor!.waitFor(appended.position, 5000);
    const written = (await collect(f.service.log.readStream(entryStream(entryId)))).at(-1)!;
    expect(written.metadata.occurredAt).to.equal(occurredAt.toISOString());

    const served = await f.call('GET', `/as-of/entries/${entryId}?at=${publishedAt}`);
    expect(served.status, JSON.stringify(served.body)).to.equal(200);
    expect(served.body).to.deep.include({ liveSince: publishedAt });
    expect(served.body.revision.publishedAt).to.equal(publishedAt);
    expect((await f.call('GET', `/entries/${entryId}/workflow?at=${publishedAt}`)).body.latest.status).to.equal('published');
    const list = await f.call('GET', `/as-of/form-sets/${formSetId}/entries?at=${publishedAt}`);
    expect(list.body.items.map((i: { entry: { id: string } }) => i.entry.id)).to.include(entryId);
  });
});
