/**
 * "What did the public API serve at instant T?": the admin as-of reads. Built from the log alone, through
 * times the events carry (occurredAt), so the answers are the same after any rebuild:
 * - which entry was live, under which slug and revision, comes from the publication intervals
 *   (projections/publication-history.ts): a form set's list at T is one range query;
 * - the values of that revision and the entry's whole workflow state at T come from folding the entry's own
 *   stream up to T (bounded by that stream's length, never by the log's).
 *
 * An instant before the project existed, or in the future, is refused (VALIDATION_ERROR naming `at`).
 */
import type { Clock } from '../clock.ts';
import type { Principal } from '../domain/principal.ts';
import type { EventActor } from '../domain/decider.ts';
import { assertCan } from '../domain/access/permissions.ts';
import { invalid, notFound } from '../domain/domain-error.ts';
import { entryDecider, type EntryState } from '../domain/content/entry/entry-decider.ts';
import { entryStream, type EntryEvent, type EntryEventOf, type Snapshot } from '../domain/content/entry/entry-events.ts';
import { StreamNotFoundError } from '../event-store/errors.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { PublicationIntervalDoc } from '../../projections/publication-history.ts';
import type { ProjectDoc } from '../../projections/access.ts';
import type { ProjectView } from './content-service.ts';
import { keysetPage, type Page, type PageRequest } from './keyset-page.ts';
import type { ProjectionWatermark } from './projection-watermark.ts';

const PROJECTION = 'publication-history';
/** How long a read waits for the publication history to fold what the log held when it began. */
const CATCH_UP_MS = 3000;

export interface AsOfRevision {
  id: string;
  revision: number;
  publishedAt: string;
  publishedBy: EventActor;
  trigger: string;
}

/** An entry as the public API served it at `at`. */
export interface AsOfEntry {
  at: string;
  formSetId: string;
  entry: { id: string; slug: string };
  revision: AsOfRevision;
  /** Since when it was served as it was at `at` (this slug and revision). Like every field, a function of the history up to `at`. */
  liveSince: string;
  /** The revision's field values (as stored: every locale). */
  data: Snapshot;
}

export interface AsOfListItem {
  entry: { id: string; slug: string };
  revision: AsOfRevision;
  liveSince: string;
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
  constructor(private readonly deps: { log: EventLog; reader: ReadModelReader; watermark: ProjectionWatermark; clock: Clock }) {}

  /** The entry as served at `at` (NOT_FOUND when it was not live then). */
  async entry(principal: Principal, project: ProjectView, entryId: string, at: string): Promise<AsOfEntry> {
    const instant = await this.#instant(principal, project, at);
    const interval = await this.#liveInterval({ entryId }, instant);
    if (!interval || interval.projectId !== project.projectId) {
      await this.#entryOfProject(project, entryId);
      throw notFound(`Entry ${entryId} was not live on the public API at ${instant.iso}.`, 'GET /entries/{id}/workflow?at= shows its workflow state at that instant.');
    }
    return this.#served(interval, instant);
  }

  /** The entry served at `slug` in the form set at `at` (NOT_FOUND when none was). */
  async entryBySlug(principal: Principal, project: ProjectView, formSetId: string, slug: string, at: string): Promise<AsOfEntry> {
    const instant = await this.#instant(principal, project, at);
    const interval = await this.#liveInterval({ formSetId, slug }, instant);
    if (!interval || interval.projectId !== project.projectId) throw notFound(`No entry was live at slug ${JSON.stringify(slug)} of form set ${formSetId} at ${instant.iso}.`);
    return this.#served(interval, instant);
  }

  /** The form set's entries live at `at`, most recently published first, a page at a time. */
  async formSetEntries(principal: Principal, project: ProjectView, formSetId: string, at: string, page: PageRequest): Promise<{ at: string; formSetId: string } & Page<AsOfListItem>> {
    const instant = await this.#instant(principal, project, at);
    const filter = { formSetId, fromMs: { $lte: instant.ms }, toMs: { $gt: instant.ms } };
    const result = await keysetPage(
      this.deps.reader,
      { projection: PROJECTION, collection: 'intervals', filter, sort: [['fromMs', 'desc']], identity: ['as-of', formSetId, instant.iso], map: (doc) => listItem(doc as unknown as PublicationIntervalDoc) },
      page,
    );
    if (result.items.length === 0 && page.cursor === undefined) await this.#formSetOfProject(project, formSetId);
    return { at: instant.iso, formSetId, ...result };
  }

  /** The entry's workflow state at `at`, folded from its stream (NOT_FOUND before it was created). */
  async workflow(principal: Principal, project: ProjectView, entryId: string, at: string): Promise<AsOfWorkflow> {
    const instant = await this.#instant(principal, project, at);
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

  /** The served entry of a live interval: its revision's values from the entry's stream up to the instant. */
  async #served(interval: PublicationIntervalDoc, instant: Instant): Promise<AsOfEntry> {
    let data: Snapshot | null = null;
    for await (const event of this.#upTo(interval.entryId, instant.ms)) {
      if (event.type !== 'entry.revision-saved') continue;
      const saved = (event as unknown as EntryEventOf<'entry.revision-saved'>).data;
      if (saved.revisionId === interval.revisionId) data = saved.snapshot;
    }
    if (data === null) throw new Error(`the log holds no save of revision ${interval.revisionId} of entry ${interval.entryId}`);
    return {
      at: instant.iso,
      formSetId: interval.formSetId,
      entry: { id: interval.entryId, slug: interval.slug },
      revision: revisionOf(interval),
      liveSince: interval.from,
      data,
    };
  }

  /** The entry's events (upcast) up to and including the instant, in stream order. */
  async *#upTo(entryId: string, ms: number): AsyncIterable<RecordedEvent> {
    try {
      for await (const event of this.deps.log.readStream(entryStream(entryId))) {
        if (Date.parse(event.metadata.occurredAt) > ms) return;
        yield event;
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
  }

  async #liveInterval(where: { entryId: string } | { formSetId: string; slug: string }, instant: Instant): Promise<PublicationIntervalDoc | null> {
    const [found] = await this.deps.reader.find<PublicationIntervalDoc & Record<string, unknown>>(PROJECTION, 'intervals', {
      filter: { ...where, fromMs: { $lte: instant.ms }, toMs: { $gt: instant.ms } },
      sort: [['fromMs', 'desc']],
      limit: 1,
    });
    return found ?? null;
  }

  /**
   * The instant `at` names, checked: a UTC instant, not before the project was created, not in the future.
   * Waits (bounded) until the publication history has folded what the log holds now.
   */
  async #instant(principal: Principal, project: ProjectView, at: string): Promise<Instant> {
    assertCan(principal, 'entries.history.read');
    const ms = Date.parse(at);
    if (Number.isNaN(ms)) throw invalid(`at: ${JSON.stringify(at)} is not an ISO 8601 instant.`, 'For example 2026-11-24T09:30:00Z or 2026-11-24T18:30:00+09:00.');
    const iso = new Date(ms).toISOString();
    const now = this.deps.clock.now();
    if (ms > now.getTime()) throw invalid(`at: ${iso} is in the future (now is ${now.toISOString()}).`, 'As-of reads answer for instants up to now; the current content is at the usual routes.');
    const doc = await this.deps.reader.get<ProjectDoc & Record<string, unknown>>('access', 'projects', project.projectId);
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
    const formSet = await this.deps.reader.get<{ projectId: string }>('content', 'form_sets', formSetId);
    if (formSet?.projectId === project.projectId) return;
    const [interval] = await this.deps.reader.find<PublicationIntervalDoc & Record<string, unknown>>(PROJECTION, 'intervals', { filter: { formSetId }, limit: 1 });
    if (interval?.projectId !== project.projectId) throw notFound(`No form set ${formSetId} in this project.`);
  }
}

interface Instant {
  ms: number;
  iso: string;
}

function revisionOf(interval: PublicationIntervalDoc): AsOfRevision {
  return { id: interval.revisionId, revision: interval.revision, publishedAt: interval.publishedAt, publishedBy: interval.publishedBy, trigger: interval.trigger };
}

function listItem(interval: PublicationIntervalDoc): AsOfListItem {
  return { entry: { id: interval.entryId, slug: interval.slug }, revision: revisionOf(interval), liveSince: interval.from };
}
