import { invalid, notFound } from '../domain/domain-error.ts';
import { entryStream } from '../domain/content/entry/entry-events.ts';
import { diffSnapshots, type FieldChange } from '../domain/content/entry/entry-history.ts';
import { isLocalizedField } from '../domain/content/form-set/field-types.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { FieldCondition } from '../read-models/read-model-store.ts';
import { queryTokens } from '../search/search-tokens.ts';
import { ENTRY_LIST_SORTS } from '../../projections/content.ts';
import { contentQueries, CONTENT_LISTS, type ContentQueries } from '../../projections/content-queries.ts';
import { AUDIT_TRAIL_LISTS } from '../../projections/audit-trail-queries.ts';
import { REVIEW_QUEUE_LISTS } from '../../projections/review-queue-queries.ts';
import { auditRecordOf, positionOfAuditRecordId, type AuditRecord } from '../audit/audit-record.ts';
import { EventNotInLogError, type LogByPosition } from '../event-store/event-store.ts';
import { ReadModelRebuildingError } from './application-errors.ts';
import { keysetPage, pinnedPage, type Page, type PageRequest, type PinnedPage } from './keyset-page.ts';
import { historyItem, type AuditLogQuery, type EntryDocHead, type EntryListQuery, type FormSetView, type HistoryItem, type ProjectView, type ReviewQueueQuery, type RevisionView } from './content-views.ts';

/**
 * What the admin API reads of form sets, entries and revisions: lists a page at a time (keyset pages, the
 * entry list pinned to its first page's position), one entry, diffs, the review desk and the audit log, each
 * within the caller's project (404 NOT_FOUND for what is not in it). Reads only: who may read is the route's
 * declared permission (src/http/admin/api-registry.ts). ContentService, the writes, builds on it.
 */
export class ContentReads {
  protected readonly content: ContentQueries;

  /** `events`: the log, where the audit trail's records are read by position (EventLog.readAt). */
  constructor(
    protected readonly reader: ReadModelReader,
    private readonly events: LogByPosition,
  ) {
    this.content = contentQueries(reader, events);
  }

  /** Every event of an entry, oldest first, from the audit trail: actor, time and kind; a page at a time. */
  async entryHistory(project: ProjectView, entryId: string, page: PageRequest): Promise<Page<HistoryItem>> {
    await this.entryDoc(project, entryId);
    await this.#auditTrailIndexesTheLog();
    const filter = { streamId: entryStream(entryId) };
    // No sort: the records' ids (auditRecordId), which sort as their log positions, order them.
    const mapPage = async (entries: ReadonlyArray<{ id: string }>) => (await this.#auditRecords(entries)).map(historyItem);
    return keysetPage(this.reader, { ...AUDIT_TRAIL_LISTS.records, filter, sort: [], identity: ['history', entryId], mapPage }, page);
  }

  /** An entry's revisions (without snapshots), oldest first or newest first; a page at a time. */
  async listRevisions(project: ProjectView, entryId: string, page: PageRequest & { order: 'asc' | 'desc' }): Promise<Page<Record<string, unknown>>> {
    await this.entryDoc(project, entryId);
    return keysetPage(this.reader, { ...CONTENT_LISTS.revisions, filter: { entryId }, sort: [['revision', page.order]], identity: ['revisions', entryId], map: (doc) => doc }, page);
  }

  /**
   * A form set's entries, filtered and sorted for a desk: status of the latest revision, assignee, who made
   * the last change, updated-time range [updatedFrom, updatedTo), and `q` (every word in the titles or text
   * fields of the latest revision, any plan: the plan gate of search is the public API's). Sorted by updated
   * time (default, newest first), title or publish time (never-published entries last when descending).
   * These change as entries do, so the walk is pinned to the position of its first page (see PinnedWalk):
   * the entries as they were then, each once, then the ones created or changed since.
   */
  async listEntries(project: ProjectView, formSetId: string, query: EntryListQuery): Promise<PinnedPage<Record<string, unknown>>> {
    const formSet = await this.formSetOrFail(project, formSetId);
    const filter: Record<string, FieldCondition> = { formSetId: formSet.formSetId };
    if (query.status !== undefined) filter['latestRevision.status'] = query.status;
    if (query.assignee !== undefined) filter['assignee'] = query.assignee;
    if (query.updatedBy !== undefined) filter['updatedBy.id'] = query.updatedBy;
    if (query.updatedFrom !== undefined) filter['updatedAt'] = { $gte: query.updatedFrom };
    // A second field holds the same time as a number, so both bounds apply in one query.
    if (query.updatedTo !== undefined) filter['updatedAtMs'] = { $lt: Date.parse(query.updatedTo) };
    const [key, direction] = query.sort.split(':') as [keyof typeof ENTRY_LIST_SORTS, 'asc' | 'desc'];
    const text = query.q === undefined ? undefined : queryTokens(query.q);
    if (text?.length === 0) throw invalid('q: no word to search for (letters or digits).', 'Send the words to look for, or leave q out.');
    const { cursor: _cursor, limit: _limit, ...list } = query;
    return pinnedPage(
      this.reader,
      { ...CONTENT_LISTS.entries, filter, sort: [[ENTRY_LIST_SORTS[key], direction]], ...(text === undefined ? {} : { text }), identity: ['entries', formSetId, list], map: (doc) => doc },
      { field: 'updatedPosition', position: this.content.checkpoint },
      query,
    );
  }

  /** One entry with its latest and live revisions and how many revisions it has (never the whole list). */
  async getEntry(project: ProjectView, entryId: string): Promise<Record<string, unknown>> {
    return withoutSearch(await this.#entryInProject(project, entryId));
  }

  /**
   * The review desk: every revision in pending_review or scheduled across the project's form sets, oldest
   * submission first, filtered by assignee, form set and status; a page at a time.
   */
  async reviewQueue(project: ProjectView, query: ReviewQueueQuery): Promise<Page<Record<string, unknown>>> {
    const filter: Record<string, FieldCondition> = { projectId: project.projectId };
    if (query.assignee !== undefined) filter['assignee'] = query.assignee;
    if (query.formSetId !== undefined) filter['formSetId'] = query.formSetId;
    if (query.status !== undefined) filter['status'] = query.status;
    const { cursor: _cursor, limit: _limit, ...list } = query;
    return keysetPage(this.reader, { ...REVIEW_QUEUE_LISTS.items, filter, sort: [['submittedAt', 'asc']], identity: ['review-queue', project.projectId, list], map: (doc) => doc }, query);
  }

  /**
   * Field-level diff between two revisions of one entry (NOT_FOUND when either is not the entry's): two
   * revision documents read by id, so it costs the same at 10 and at 10,000 revisions.
   */
  async diffRevisions(project: ProjectView, entryId: string, fromRevisionId: string, toRevisionId: string): Promise<{ from: Record<string, unknown>; to: Record<string, unknown>; changes: FieldChange[] }> {
    const entry = await this.entryDoc(project, entryId);
    const formSet = await this.formSetOrFail(project, entry.formSetId);
    const [from, to] = await Promise.all([fromRevisionId, toRevisionId].map(this.content.revision));
    for (const [revision, id] of [[from, fromRevisionId], [to, toRevisionId]] as const) {
      if (!revision || revision.entryId !== entryId) throw notFound(`Revision ${id} does not belong to this entry.`);
    }
    const localizedFields = project.contentLocales.locales.length > 1 ? formSet.definition.fields.filter((f) => isLocalizedField(f)).map((f) => f.key) : [];
    const richTextFields = formSet.definition.fields.filter((f) => f.type === 'tiptap').map((f) => f.key);
    const changes = diffSnapshots(from!.snapshot, to!.snapshot, { localizedFields, richTextFields });
    const ref = (r: RevisionView) => ({ revisionId: r.revisionId, revision: r.revision, status: r.status });
    return { from: ref(from!), to: ref(to!), changes };
  }

  /** The project's audit log, newest first: tenant_admin sessions only; a page at a time. */
  async auditLog(project: ProjectView, query: AuditLogQuery): Promise<Page<HistoryItem & { streamId: string; entryId: string | null }>> {
    await this.#auditTrailIndexesTheLog();
    const filter: Record<string, FieldCondition> = { projectId: project.projectId };
    if (query.actor !== undefined) filter['actorId'] = query.actor;
    if (query.entryId !== undefined) filter['streamId'] = entryStream(query.entryId);
    const from = query.from === undefined ? undefined : Date.parse(query.from);
    const to = query.to === undefined ? undefined : Date.parse(query.to);
    if (from !== undefined || to !== undefined) filter['occurredAtMs'] = { ...(from === undefined ? {} : { $gte: from }), ...(to === undefined ? {} : { $lt: to }) };
    const { cursor: _cursor, limit: _limit, ...list } = query;
    // Record ids sort as their log positions: ties in time come newest first too.
    const mapPage = async (entries: ReadonlyArray<{ id: string }>) =>
      (await this.#auditRecords(entries)).map((record) => ({ ...historyItem(record), streamId: record.streamId, entryId: record.streamId.startsWith('entry-') ? record.streamId.slice('entry-'.length) : null }));
    return keysetPage(this.reader, { ...AUDIT_TRAIL_LISTS.records, filter, sort: [['occurredAtMs', 'desc']], identity: ['audit', project.projectId, list], mapPage }, query);
  }

  /**
   * Records folded by audit-trail 6 and before are filed by other fields or keys (`actor.id`, no `actorId`): while an
   * upgrade rebuilds the audit trail they would be missed by a filter, so the reads wait for the new generation
   * (503, retryable) instead of answering in part.
   */
  async #auditTrailIndexesTheLog(): Promise<void> {
    const builtBy = await this.reader.builtByVersion(AUDIT_TRAIL_LISTS.records.projection);
    if (builtBy !== null && builtBy < AUDIT_TRAIL_INDEXES_THE_LOG) throw new ReadModelRebuildingError(AUDIT_TRAIL_LISTS.records.projection, builtBy, AUDIT_TRAIL_INDEXES_THE_LOG);
  }

  /**
   * The audit records of a page of the audit trail: the events at its records' ids (log positions), read from
   * the log, made records as the projection filed them. A position the log holds no event at means the read
   * model was not folded from this log (a log restored or cut behind it): an error, never a silent gap.
   */
  async #auditRecords(entries: ReadonlyArray<{ id: string }>): Promise<AuditRecord[]> {
    const events = await this.events.readAt(entries.map((entry) => positionOfAuditRecordId(entry.id)));
    return events.map((event, i) => {
      if (event === null) throw new EventNotInLogError(`the audit trail files an event at log position ${positionOfAuditRecordId(entries[i]!.id)} that the log does not hold: rebuild the audit-trail projection from this log (annals projections rebuild audit-trail) and compare it with a backup`);
      return auditRecordOf(event);
    });
  }

  async formSetOrFail(project: ProjectView, formSetId: string): Promise<FormSetView> {
    const formSet = await this.content.formSet(formSetId);
    if (!formSet || formSet.projectId !== project.projectId) throw notFound(`No form set ${formSetId} in this project.`);
    return formSet;
  }

  async revisionOrFail(project: ProjectView, revisionId: string): Promise<RevisionView> {
    const revision = await this.content.revision(revisionId);
    if (!revision || revision.projectId !== project.projectId) throw notFound(`No revision ${revisionId} in this project.`);
    // A revision of a deleted entry is gone, whatever a half-replayed read model may still hold.
    if (!(await this.content.entry(revision.entryId))) throw notFound(`No revision ${revisionId} in this project.`);
    return revision;
  }

  /** The entry's read-model head (form set, latest revision); 404 NOT_FOUND when it is not in the project. */
  entryOrFail(project: ProjectView, entryId: string): Promise<EntryDocHead> {
    return this.entryDoc(project, entryId);
  }

  protected entryDoc(project: ProjectView, entryId: string): Promise<EntryDocHead> {
    return this.#entryInProject(project, entryId);
  }

  /** The entry's whole read-model document; 404 NOT_FOUND when it is not in the project. */
  async #entryInProject(project: ProjectView, entryId: string) {
    const entry = await this.content.entry(entryId);
    if (!entry || entry.projectId !== project.projectId) throw notFound(`No entry ${entryId} in this project.`);
    return entry;
  }

  /** The entry document as the read model holds it, without its search tokens. */
  protected async entryDocument(entryId: string): Promise<Record<string, unknown>> {
    const entry = await this.content.entry(entryId);
    if (!entry) throw notFound(`No entry ${entryId}.`);
    return withoutSearch(entry);
  }
}

/**
 * The version of audit-trail these reads take: its records an index of the log (AuditIndexEntry, version 6) keyed
 * by auditRecordId (version 7; version 6 never left the session that made both).
 */
const AUDIT_TRAIL_INDEXES_THE_LOG = 7;

/** An entry document as the API shows it: without its search tokens. */
function withoutSearch(entry: { search?: unknown }): Record<string, unknown> {
  const { search: _search, ...rest } = entry;
  return rest;
}
