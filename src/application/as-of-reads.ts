/**
 * "What did the public API serve at instant T?": the admin as-of reads. Built from the log alone, through
 * times the events carry, so the answers are the same after any rebuild:
 * - which entry was live, under which slug and revision, and which former slug redirected where, comes from
 *   the publication history (projections/publication-history.ts): a form set's list at T is one range query,
 *   in the public list's order (first published, newest first);
 * - an entry's values as the public API served them at T: the revision's snapshot (its save, one read of the
 *   entry's stream) shaped in the requested locale as the public API shapes it (src/public-content/entry-view.ts: a localized
 *   field without a value in that locale takes the default locale's), with the form set's definition and the
 *   project's content locales as they were at T (folded from their streams up to T);
 * - the entry's whole workflow state at T: its stream folded up to T.
 * The values served cost the same at any length of the entry's history; the workflow state is bounded by the
 * entry's stream, the form set's and the project's by theirs (their changes), never by the log's. An event counts from its instant (src/domain/content/entry/entry-instant.ts), and a
 * read at T includes everything that happened at T.
 *
 * An instant before the project existed, or in the future, is refused (VALIDATION_ERROR naming `at`); so is a
 * locale that was not a content locale at T, as the public API refused it then.
 */
import type { Clock } from '../clock.ts';
import type { EventActor } from '../domain/decider.ts';
import { invalid, notFound } from '../domain/domain-error.ts';
import { entryDecider, type EntryState } from '../domain/content/entry/entry-decider.ts';
import { entryStream, type EntryEvent, type EntryEventOf, type Snapshot } from '../domain/content/entry/entry-events.ts';
import { entryEventInstantMs } from '../domain/content/entry/entry-instant.ts';
import { formSetStreamId } from '../domain/content/form-set/form-set-events.ts';
import type { FormSetDefinition } from '../domain/content/form-set/form-set-definition.ts';
import { projectStream } from '../domain/access/access-streams.ts';
import { shapeEntryView } from '../public-content/entry-view.ts';
import { singleEntryBody } from '../public-content/public-json.ts';
import { StreamNotFoundError } from '../event-store/errors.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { PublicationIntervalDoc } from '../../projections/publication-history.ts';
import type { ProjectView } from './content-service.ts';
import { keysetPage, type Page, type PageRequest } from './keyset-page.ts';
import type { ProjectionWatermark } from './projection-watermark.ts';
import { publicationHistoryQueries, PUBLICATION_HISTORY, PUBLICATION_HISTORY_LISTS, type PublicationHistoryQueries } from '../../projections/publication-history-queries.ts';
import { contentQueries, type ContentQueries } from '../../projections/content-queries.ts';
import { accessQueries } from '../../projections/access-queries.ts';

const PROJECTION = PUBLICATION_HISTORY;
/** How long a read waits for the publication history to fold what the log held when it began. */
const CATCH_UP_MS = 3000;

export interface AsOfRevision {
  id: string;
  revision: number;
  publishedAt: string;
  publishedBy: EventActor;
  trigger: string;
}

/**
 * An entry as the public API served it at `at`, in `locale`. The public single-entry answer then was
 * {formSet, entry, revision: {id, revision, updatedAt: revision.publishedAt}, data, mediaUrls, widgetRoles}.
 */
export interface AsOfEntry {
  at: string;
  /** The locale answered for: the one asked for, else the default locale then. */
  locale: string;
  formSetId: string;
  /** The form set as the public API named it then. */
  formSet: { id: string; slug: string; name: string };
  entry: { id: string; slug: string };
  revision: AsOfRevision;
  /** Since when it was served as it was at `at` (this slug and revision). Like every field, a function of the history up to `at`. */
  liveSince: string;
  /** The field values as served in `locale` (a localized field without a value there: the default locale's). */
  data: Record<string, unknown>;
  /** Image and file fields' media URLs, on the project's public base. */
  mediaUrls: Record<string, string | string[]>;
  widgetRoles: Record<string, string>;
}

/** A former slug at `at`: the public API answered 301 to the entry's slug then. */
export interface AsOfMoved {
  at: string;
  formSetId: string;
  /** The slug asked for. */
  slug: string;
  /** The entry it redirected to, and its slug then. */
  entry: { id: string; slug: string };
}

export interface AsOfListItem {
  entry: { id: string; slug: string };
  revision: AsOfRevision;
  liveSince: string;
  /** When the entry first went live: the public list's order (newest first). */
  firstPublishedAt: string;
}

/** How an entry read is answered: the locale asked for (default: the default locale then), and the public base its media URLs are on. */
export interface AsOfEntryOptions {
  locale?: string | undefined;
  /** `${origin}/public/p/${projectId}/v1`. */
  publicBaseUrl: string;
}

/** An entry's workflow state at `at`: its aggregate's state folded from its events up to that instant. */
export interface AsOfWorkflow {
  at: string;
  entryId: string;
  formSetId: string;
  deleted: boolean;
  slug: string;
  previousSlugs: string[];
  assignee: string | null;
  revisionCount: number;
  latest: {
    revisionId: string;
    revision: number;
    status: string;
    savedAt: string;
    savedBy: EventActor | null;
    submittedBy: EventActor | null;
    publishAt: string | null;
    publishedAt: string | null;
    rejectionReason: string | null;
  } | null;
  live: { revisionId: string; revision: number; publishedAt: string } | null;
  /** The last event folded: the state holds from its time until the next event. */
  lastEvent: { eventId: string; type: string; occurredAt: string; actor: EventActor };
}

export class AsOfReads {
  constructor(private readonly deps: { log: EventLog; reader: ReadModelReader; watermark: ProjectionWatermark; clock: Clock }) {
    this.#history = publicationHistoryQueries(deps.reader);
    this.#content = contentQueries(deps.reader, deps.log);
  }

  readonly #history: PublicationHistoryQueries;
  readonly #content: ContentQueries;

  /** The entry as served at `at` (NOT_FOUND when it was not live then). */
  async entry(project: ProjectView, entryId: string, at: string, options: AsOfEntryOptions): Promise<AsOfEntry> {
    const instant = await this.#instant(project, at);
    const locales = await this.#locales(project, instant, options.locale);
    const interval = await this.#liveInterval({ entryId }, instant);
    if (!interval || interval.projectId !== project.projectId) {
      await this.#entryOfProject(project, entryId);
      throw notFound(`Entry ${entryId} was not live on the public API at ${instant.iso}.`, 'GET /entries/{id}/workflow?at= shows its workflow state at that instant.');
    }
    return this.#served(interval, instant, locales, options.publicBaseUrl);
  }

  /**
   * What the public API answered at `slug` of the form set at `at`: the entry served there, or, for a former
   * slug of an entry live then, where it redirected (301); NOT_FOUND when neither.
   */
  async entryBySlug(project: ProjectView, formSetId: string, slug: string, at: string, options: AsOfEntryOptions): Promise<{ kind: 'served'; entry: AsOfEntry } | ({ kind: 'moved' } & AsOfMoved)> {
    const instant = await this.#instant(project, at);
    const locales = await this.#locales(project, instant, options.locale);
    const interval = await this.#liveInterval({ formSetId, slug }, instant);
    if (interval && interval.projectId === project.projectId) return { kind: 'served', entry: await this.#served(interval, instant, locales, options.publicBaseUrl) };
    const moved = await this.#redirect(formSetId, slug, instant);
    if (moved && moved.projectId === project.projectId) return { kind: 'moved', at: instant.iso, formSetId, slug, entry: { id: moved.entryId, slug: moved.slug } };
    throw notFound(`No entry was live at slug ${JSON.stringify(slug)} of form set ${formSetId} at ${instant.iso}, nor was it a former slug of an entry live then.`);
  }

  /** The form set's entries live at `at`, in the public list's order (first published, newest first), a page at a time. */
  async formSetEntries(project: ProjectView, formSetId: string, at: string, page: PageRequest): Promise<{ at: string; formSetId: string } & Page<AsOfListItem>> {
    const instant = await this.#instant(project, at);
    const filter = { formSetId, firstPublishedMs: { $lte: instant.ms }, fromMs: { $lte: instant.ms }, toMs: { $gt: instant.ms } };
    const result = await keysetPage(
      this.deps.reader,
      { ...PUBLICATION_HISTORY_LISTS.intervals, filter, sort: [['firstPublishedMs', 'desc'], ['entryId', 'desc']], identity: ['as-of', formSetId, instant.iso], map: (doc) => listItem(doc as unknown as PublicationIntervalDoc) },
      page,
    );
    if (result.items.length === 0 && page.cursor === undefined) await this.#formSetOfProject(project, formSetId);
    return { at: instant.iso, formSetId, ...result };
  }

  /** The entry's workflow state at `at`, folded from its stream (NOT_FOUND before it was created). */
  async workflow(project: ProjectView, entryId: string, at: string): Promise<AsOfWorkflow> {
    const instant = await this.#instant(project, at);
    let state: EntryState = entryDecider.initialState();
    let last: AsOfWorkflow['lastEvent'] | null = null;
    for await (const event of this.#upTo(entryId, instant.ms)) {
      state = entryDecider.evolve(state, { type: event.type, data: event.data, actor: event.metadata.actor } as EntryEvent);
      last = { eventId: event.id, type: event.type, occurredAt: event.metadata.occurredAt, actor: { type: event.metadata.actor.type, id: event.metadata.actor.id } };
    }
    if (!state.exists || state.projectId !== project.projectId || !last) {
      await this.#entryOfProject(project, entryId);
      throw notFound(`Entry ${entryId} did not exist yet at ${instant.iso}.`);
    }
    const latest = state.latest;
    return {
      at: instant.iso,
      entryId,
      formSetId: state.formSetId,
      deleted: state.deleted,
      slug: state.slug,
      previousSlugs: [...state.previousSlugs],
      assignee: state.assignee,
      revisionCount: state.revisionCount,
      latest: latest
        ? {
            revisionId: latest.revisionId,
            revision: latest.revision,
            status: latest.status,
            savedAt: latest.savedAt,
            savedBy: latest.savedBy,
            submittedBy: latest.submittedBy,
            publishAt: latest.publishAt,
            publishedAt: latest.publishedAt,
            rejectionReason: latest.rejectionReason,
          }
        : null,
      live: state.live && !state.deleted ? { ...state.live } : null,
      lastEvent: last,
    };
  }

  /**
   * The served entry of a live interval, as the public API shaped it at the instant: the revision's snapshot
   * (one read: the interval names where its save is in the entry's stream), the form set's definition then, in
   * the locale.
   */
  async #served(interval: PublicationIntervalDoc, instant: Instant, locales: ServedLocales, publicBaseUrl: string): Promise<AsOfEntry> {
    const snapshot = await this.#snapshotOf(interval);
    const formSet = await this.#formSetAt(interval.formSetId, instant);
    if (!formSet) throw new Error(`the log holds no definition of form set ${interval.formSetId} at ${instant.iso}`);
    const view = shapeEntryView({
      projectId: interval.projectId,
      formSet: { formSetId: interval.formSetId, slug: formSet.slug, name: formSet.name, definition: formSet },
      // Creation and import metadata shape lookups and SEO documents, not the single-entry answer.
      entry: { entryId: interval.entryId, slug: interval.slug, createdAt: interval.firstPublishedAt, publishedAt: interval.firstPublishedAt, importPath: null, external: null },
      revision: { revisionId: interval.revisionId, revision: interval.revision, updatedAt: interval.publishedAt, snapshot },
      locale: locales.locale,
      defaultLocale: locales.defaultLocale,
    });
    const body = singleEntryBody(view, publicBaseUrl) as { formSet: AsOfEntry['formSet']; data: AsOfEntry['data']; mediaUrls: AsOfEntry['mediaUrls']; widgetRoles: AsOfEntry['widgetRoles'] };
    return {
      at: instant.iso,
      locale: locales.locale,
      formSetId: interval.formSetId,
      formSet: body.formSet,
      entry: { id: interval.entryId, slug: interval.slug },
      revision: revisionOf(interval),
      liveSince: interval.from,
      data: body.data,
      mediaUrls: body.mediaUrls,
      widgetRoles: body.widgetRoles,
    };
  }

  /** The snapshot of the interval's revision: its save, read where the interval says it is, else found in the stream. */
  async #snapshotOf(interval: PublicationIntervalDoc): Promise<Snapshot> {
    const isSave = (event: RecordedEvent) => event.type === 'entry.revision-saved' && (event.data as { revisionId?: unknown }).revisionId === interval.revisionId;
    const stream = entryStream(interval.entryId);
    if (interval.savedAt) {
      for await (const event of this.deps.log.readStream(stream, { fromRevision: BigInt(interval.savedAt.streamRevision), maxCount: 1 })) {
        if (isSave(event)) return (event as unknown as EntryEventOf<'entry.revision-saved'>).data.snapshot;
      }
    }
    for await (const event of this.deps.log.readStream(stream)) {
      if (isSave(event)) return (event as unknown as EntryEventOf<'entry.revision-saved'>).data.snapshot;
    }
    throw new Error(`the log holds no save of revision ${interval.revisionId} of entry ${interval.entryId}`);
  }

  /**
   * The entry's events (upcast) up to and including the instant, in stream order. An event counts from its
   * instant (entry-instant.ts), never before the one before it: the fold stops at the first event after `ms`.
   */
  async *#upTo(entryId: string, ms: number): AsyncIterable<RecordedEvent> {
    let latest = Number.NEGATIVE_INFINITY;
    try {
      for await (const event of this.deps.log.readStream(entryStream(entryId))) {
        latest = Math.max(latest, entryEventInstantMs(event.type, event.data, event.metadata.occurredAt));
        if (latest > ms) return;
        yield event;
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
  }

  /** A stream's events (upcast) whose occurredAt is at or before `ms`; none when the stream does not exist. */
  async *#streamUpTo(streamId: string, ms: number): AsyncIterable<RecordedEvent> {
    try {
      for await (const event of this.deps.log.readStream(streamId)) {
        if (Date.parse(event.metadata.occurredAt) > ms) return;
        yield event;
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
  }

  /** The form set's definition at the instant (its stream folded up to it), or null when it did not exist then. */
  async #formSetAt(formSetId: string, instant: Instant): Promise<FormSetDefinition | null> {
    let definition: FormSetDefinition | null = null;
    for await (const event of this.#streamUpTo(formSetStreamId(formSetId), instant.ms)) {
      if (event.type === 'form-set.created' || event.type === 'form-set.updated') definition = (event.data as { definition: FormSetDefinition }).definition;
      else if (event.type === 'form-set.deleted') definition = null;
    }
    return definition;
  }

  /**
   * The locale a read at the instant answers in, as the public API chose it then: the one asked for (matched
   * without regard to case) when it was a content locale of the project then, else 400 naming `locale`; the
   * default locale then when none was asked for.
   */
  async #locales(project: ProjectView, instant: Instant, asked: string | undefined): Promise<ServedLocales> {
    let locales: { locales: string[]; defaultLocale: string } | null = null;
    for await (const event of this.#streamUpTo(projectStream(project.projectId), instant.ms)) {
      if (event.type === 'project.created') locales = (event.data as { contentLocales: { locales: string[]; defaultLocale: string } }).contentLocales;
      else if (event.type === 'project.content-locales-changed') locales = event.data as { locales: string[]; defaultLocale: string };
    }
    const current = locales ?? project.contentLocales;
    if (asked === undefined) return { locale: current.defaultLocale, defaultLocale: current.defaultLocale };
    const match = current.locales.find((l) => l.toLowerCase() === asked.toLowerCase());
    if (match === undefined) throw invalid(`locale: ${JSON.stringify(asked)} was not a content locale of this project at ${instant.iso}.`, `The content locales then: ${current.locales.join(', ')}.`);
    return { locale: match, defaultLocale: current.defaultLocale };
  }

  #liveInterval(where: { entryId: string } | { formSetId: string; slug: string }, instant: Instant): Promise<PublicationIntervalDoc | null> {
    return this.#history.liveInterval(where, instant.ms);
  }

  /**
   * Where a former slug of the form set redirected at the instant, as the public API answered it: the entry
   * that left the slug, when it was live then (its slug then), or null.
   */
  async #redirect(formSetId: string, slug: string, instant: Instant): Promise<PublicationIntervalDoc | null> {
    const redirect = await this.#history.slugRedirectAt(formSetId, slug, instant.ms);
    if (!redirect) return null;
    const live = await this.#liveInterval({ entryId: redirect.entryId }, instant);
    return live && live.slug !== slug ? live : null;
  }

  /**
   * The instant `at` names, checked: a UTC instant, not before the project was created, not in the future.
   * Waits (bounded) until the publication history has folded what the log holds now.
   */
  async #instant(project: ProjectView, at: string): Promise<Instant> {
    const ms = Date.parse(at);
    if (Number.isNaN(ms)) throw invalid(`at: ${JSON.stringify(at)} is not an ISO 8601 instant.`, 'For example 2026-11-24T09:30:00Z or 2026-11-24T18:30:00+09:00.');
    const iso = new Date(ms).toISOString();
    const now = this.deps.clock.now();
    if (ms > now.getTime()) throw invalid(`at: ${iso} is in the future (now is ${now.toISOString()}).`, 'As-of reads answer for instants up to now; the current content is at the usual routes.');
    const doc = await accessQueries(this.deps.reader).project(project.projectId);
    if (doc && ms < Date.parse(doc.createdAt)) {
      throw invalid(`at: ${iso} is before the project existed (it was created at ${doc.createdAt}).`, `Ask for an instant at or after ${doc.createdAt}.`);
    }
    const head = await this.deps.log.headPosition();
    if (head !== null) await this.deps.watermark.waitForLog(head, CATCH_UP_MS, [PROJECTION]);
    return { ms, iso };
  }

  async #entryOfProject(project: ProjectView, entryId: string): Promise<void> {
    for await (const event of this.#upTo(entryId, Number.MAX_SAFE_INTEGER)) {
      if (event.type === 'entry.created' && (event.data as { projectId: string }).projectId === project.projectId) return;
      break;
    }
    throw notFound(`No entry ${entryId} in this project.`);
  }

  async #formSetOfProject(project: ProjectView, formSetId: string): Promise<void> {
    const formSet = await this.#content.formSet(formSetId);
    if (formSet?.projectId === project.projectId) return;
    const interval = await this.#history.anyIntervalOfFormSet(formSetId);
    if (interval?.projectId !== project.projectId) throw notFound(`No form set ${formSetId} in this project.`);
  }
}

interface Instant {
  ms: number;
  iso: string;
}

interface ServedLocales {
  locale: string;
  defaultLocale: string;
}

function revisionOf(interval: PublicationIntervalDoc): AsOfRevision {
  return { id: interval.revisionId, revision: interval.revision, publishedAt: interval.publishedAt, publishedBy: interval.publishedBy, trigger: interval.trigger };
}

function listItem(interval: PublicationIntervalDoc): AsOfListItem {
  return { entry: { id: interval.entryId, slug: interval.slug }, revision: revisionOf(interval), liveSince: interval.from, firstPublishedAt: interval.firstPublishedAt };
}
