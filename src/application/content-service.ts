import type { Principal } from '../domain/principal.ts';
import { DomainError, invalid, notFound } from '../domain/domain-error.ts';
import { actorOf } from '../domain/access/caller.ts';
import { duplicateEntry, entryDecider, knowsRevision, publishOutcome, type EntryCommand, type EntryContext, type EntryState, type ExistingEntry } from '../domain/content/entry/entry-decider.ts';
import { entryStream, type EntryEvent, type ExternalIdentity } from '../domain/content/entry/entry-events.ts';
import { DEFAULT_APPROVAL_POLICY, strictestOf } from '../domain/access/project-decider.ts';
import { requirePersonFor } from '../domain/approval-policy.ts';
import { KeyIssuersCache } from './key-issuers.ts';
import type { RevisionStatus } from '../domain/content/entry/entry-workflow.ts';
import { toUtcInstant } from '../domain/content/entry/utc-instant.ts';
import { copySlug, validateSlug } from '../domain/content/entry/slug.ts';
import type { TimeInput } from '../domain/content/entry/utc-instant.ts';
import { formSetDecider } from '../domain/content/form-set/form-set-decider.ts';
import { formSetStreamId } from '../domain/content/form-set/form-set-events.ts';
import { assertValidEntryFields } from '../domain/content/form-set/field-validation.ts';
import type { VersionedFormSetDefinition } from '../domain/content/form-set/form-set-definition.ts';
import type { AppendContext } from '../event-store/event-log.ts';
import type { AggregateSnapshots } from './aggregate-snapshots.ts';
import { handleCommand, loadAggregate, type CommandResult } from './command-handler.ts';
import type { IdempotentResult } from './idempotency.ts';
import { ProjectWrites, type ProjectServiceDeps } from './project-writes.ts';
import type { WorkingCopyStore } from '../working-copies/working-copy-store.ts';
import { accessQueries } from '../../projections/access-queries.ts';
import { ContentReads } from './content-reads.ts';
import type { BulkScheduleResult, EntryDocHead, FormSetView, ProjectView, RevisionAction } from './content-views.ts';

export { ContentReads } from './content-reads.ts';
export { eventKind } from './content-views.ts';
export type {
  AuditLogQuery,
  BulkScheduleResult,
  EntryDocHead,
  EntryListQuery,
  FormSetView,
  HistoryItem,
  ProjectView,
  RefusalRecord,
  ReviewQueueQuery,
  RevisionAction,
  RevisionView,
} from './content-views.ts';

/** What the entry services are built from: a project's write deps, the entry aggregates' snapshots, and who issued each key. */
export type ContentServiceDeps = ProjectServiceDeps & {
  entrySnapshots?: AggregateSnapshots<EntryState> | undefined;
  keyIssuers?: KeyIssuersCache | undefined;
  /** People's unsaved typing (./working-copies.ts): a saved revision ends the saver's, a deleted entry every one. */
  workingCopies?: WorkingCopyStore | undefined;
};

/**
 * Use cases that write form sets, entries and revisions (the reads are ContentReads'). The caller's permission
 * is the route's (src/http/admin/api-registry.ts); everything that depends on the data (slug rules, field values,
 * the approval policy, the decider's rules) is checked before the first append, so bad input writes nothing; a
 * write returns once the read models show it, so the caller's next read sees its own write.
 */
export class ContentService extends ContentReads {
  constructor(private readonly deps: ContentServiceDeps) {
    super(deps.reader, deps.log);
    this.#writes = new ProjectWrites(deps);
    this.#keyIssuers = deps.keyIssuers ?? new KeyIssuersCache();
  }

  readonly #writes: ProjectWrites;
  readonly #keyIssuers: KeyIssuersCache;

  async createFormSet(principal: Principal, project: ProjectView, definition: Record<string, unknown>, idempotencyKey?: string): Promise<IdempotentResult> {
    const run = async (ids: Record<string, string>): Promise<IdempotentResult> => {
      const formSetId = ids['formSetId']!;
      const candidate = { ...definition, id: formSetId };
      // Decide first (validates the whole definition), then reserve the slug, then append.
      formSetDecider.decide({ type: 'create_form_set', projectId: project.projectId, definition: candidate }, formSetDecider.initialState(), { principal });
      const slug = String(definition['slug']);
      const scope = `form-set-slug:${project.projectId}`;
      await this.deps.reservations.claim(scope, slug, formSetId, actorOf(principal), 'form set slug');
      try {
        const result = await handleCommand(this.deps.log, formSetStreamId(formSetId), formSetDecider, { type: 'create_form_set', projectId: project.projectId, definition: candidate }, { principal }, { actor: actorOf(principal) });
        await this.#writes.settle(result.position);
      } catch (error) {
        await this.deps.reservations.release(scope, slug, formSetId, actorOf(principal));
        throw error;
      }
      return { status: 201, body: await this.formSetOrFail(project, formSetId) };
    };
    return this.#writes.idempotent(principal, project.projectId, 'create_form_set', idempotencyKey, definition, ['formSetId'], run);
  }

  async updateFormSet(principal: Principal, project: ProjectView, formSetId: string, definition: Record<string, unknown>, expectedVersion?: number): Promise<FormSetView> {
    const current = await this.formSetOrFail(project, formSetId);
    // humanApproval: a form set's slug and fields shape what the public API serves of its live entries.
    if (principal.kind === 'agent' && project.approvalPolicy?.humanApproval && (await this.content.hasLiveEntries(formSetId))) {
      requirePersonFor(principal, project.approvalPolicy, 'update_form_set', { formSetId }, 'change a form set with live entries (its slug and fields shape what the public API serves)');
    }
    const candidate = { ...definition, id: formSetId };
    const newSlug = typeof definition['slug'] === 'string' ? definition['slug'] : current.slug;
    const scope = `form-set-slug:${project.projectId}`;
    const command = { type: 'update_form_set' as const, definition: candidate, ...(expectedVersion === undefined ? {} : { expectedVersion }) };
    formSetDecider.decide(command, { status: 'active', projectId: project.projectId, definition: current.definition, version: current.version } as never, { principal });
    if (newSlug !== current.slug) await this.deps.reservations.claim(scope, newSlug, formSetId, actorOf(principal), 'form set slug');
    const result = await handleCommand(this.deps.log, formSetStreamId(formSetId), formSetDecider, command, { principal }, { actor: actorOf(principal) });
    if (newSlug !== current.slug) await this.deps.reservations.release(scope, current.slug, formSetId, actorOf(principal));
    await this.#writes.settle(result.position);
    return this.formSetOrFail(project, formSetId);
  }

  async deleteFormSet(principal: Principal, project: ProjectView, formSetId: string): Promise<void> {
    const current = await this.formSetOrFail(project, formSetId);
    const result = await handleCommand(this.deps.log, formSetStreamId(formSetId), formSetDecider, { type: 'delete_form_set' }, { principal }, { actor: actorOf(principal) });
    await this.deps.reservations.release(`form-set-slug:${project.projectId}`, current.slug, formSetId, actorOf(principal));
    await this.#writes.settle(result.position);
  }

  async createEntry(
    principal: Principal,
    project: ProjectView,
    formSetId: string,
    input: { slug: unknown; fields: unknown; importPath?: string; external?: { sourceType?: string; entityType?: string; externalId: string } },
    idempotencyKey?: string,
  ): Promise<IdempotentResult> {
    const formSet = await this.formSetOrFail(project, formSetId);
    if (typeof input.slug !== 'string') throw invalid('slug: required, a string of lowercase letters, digits and hyphens.');
    const slug = input.slug;
    validateSlug(slug);
    const snapshot = await this.#validFields(project, formSet, input.fields ?? {});
    const run = async (ids: Record<string, string>): Promise<IdempotentResult> => {
      const entryId = ids['entryId']!;
      const revisionId = ids['revisionId']!;
      const scope = `entry-slug:${formSetId}`;
      const command: EntryCommand = {
        type: 'create',
        entryId,
        projectId: project.projectId,
        formSetId,
        slug,
        initialRevision: { revisionId, snapshot },
        ...(input.importPath === undefined ? {} : { importPath: input.importPath }),
        ...(input.external === undefined ? {} : { external: input.external }),
      };
      const context = this.#context(principal, project);
      const existing = await this.#entryState(entryId);
      // Decide before claiming the slug: a refused command claims nothing. A retried idempotent
      // request finds its own entry already created and answers with it.
      if (existing.created) return { status: 201, body: await this.#entryResponse(entryId) };
      entryDecider.decide(command, existing.state, context);
      await this.deps.reservations.claim(scope, slug, entryId, actorOf(principal), 'slug');
      try {
        const result = await this.#entryCommand(entryId, command, context, { actor: actorOf(principal), ...(idempotencyKey ? { idempotencyKey } : {}) });
        await this.#writes.settle(result.position);
      } catch (error) {
        await this.deps.reservations.release(scope, slug, entryId, actorOf(principal));
        throw error;
      }
      return { status: 201, body: await this.#entryResponse(entryId) };
    };
    return this.#writes.idempotent(principal, project.projectId, 'create_entry', idempotencyKey, { formSetId, ...input }, ['entryId', 'revisionId'], run);
  }

  async saveRevision(principal: Principal, project: ProjectView, entryId: string, input: { fields: unknown; expectedRevision?: number }, idempotencyKey?: string): Promise<IdempotentResult> {
    const entry = await this.entryDoc(project, entryId);
    const formSet = await this.formSetOrFail(project, entry.formSetId);
    const snapshot = await this.#validFields(project, formSet, input.fields ?? {}, await this.#richTextBase(formSet, entry));
    const run = async (ids: Record<string, string>): Promise<IdempotentResult> => {
      const revisionId = ids['revisionId']!;
      const command: EntryCommand = {
        type: 'saveRevision',
        entryId,
        revisionId,
        snapshot,
        ...(input.expectedRevision === undefined ? {} : { expectedRevision: input.expectedRevision }),
      };
      const existing = await this.#entryState(entryId);
      if (!(await this.#hasRevision(existing.state, entryId, revisionId))) {
        const result = await this.#entryCommand(entryId, command, this.#context(principal, project), { actor: actorOf(principal), ...(idempotencyKey ? { idempotencyKey } : {}) });
        await this.#writes.settle(result.position);
      }
      // What was typed is a revision now: the saver's working copy ends. The save stands if this fails; the copy
      // left behind holds what the revision holds, and the console offers only a copy that differs from it.
      if (principal.kind === 'user') await this.deps.workingCopies?.delete(entryId, { type: 'user', id: principal.userId }).catch(() => undefined);
      return { status: 201, body: await this.#revisionResponse(revisionId) };
    };
    return this.#writes.idempotent(principal, project.projectId, 'save_revision', idempotencyKey, { entryId, ...input }, ['revisionId'], run);
  }

  async revisionAction(principal: Principal, project: ProjectView, revisionId: string, action: RevisionAction, body: { revision?: number; publishAt?: unknown; reason?: string }): Promise<Record<string, unknown>> {
    // Approving and publishing compare people: who issued each agent key of the project.
    const context = action === 'approve' || action === 'publish' ? await this.#approvalContext(principal, project) : this.#context(principal, project);
    return this.#revisionAction(principal, project, revisionId, action, body, context);
  }

  async #revisionAction(principal: Principal, project: ProjectView, revisionId: string, action: RevisionAction, body: { revision?: number; publishAt?: unknown; reason?: string }, context: EntryContext): Promise<Record<string, unknown>> {
    const revision = await this.revisionOrFail(project, revisionId);
    // The revision as recorded: the aggregate keeps only the latest and live revisions (see RecordedRevision).
    const recorded = { revisionId, revision: revision.revision, status: revision.status as RevisionStatus };
    const common = { entryId: revision.entryId, revisionId, recorded, ...(body.revision === undefined ? {} : { revision: body.revision }) };
    const command: EntryCommand =
      action === 'submit' ? { type: 'submitForReview', ...common }
      : action === 'approve' ? { type: 'approve', ...common, ...(body.publishAt === undefined ? {} : { publishAt: typeof body.publishAt === 'string' ? { at: body.publishAt } : (body.publishAt as TimeInput) }) }
      : action === 'reject' ? { type: 'reject', ...common, ...(body.reason === undefined ? {} : { reason: body.reason }) }
      : action === 'withdraw' ? { type: 'withdraw', ...common }
      : action === 'reopen' ? { type: 'reopen', ...common }
      : { type: 'publish', ...common, revision: body.revision ?? revision.revision };
    const result = await this.#entryCommand(revision.entryId, command, context, { actor: actorOf(principal) });
    await this.#writes.settle(result.position);
    const after = await this.revisionOrFail(project, revisionId);
    const response: Record<string, unknown> = { id: revisionId, revisionId, entryId: revision.entryId, revision: after.revision, status: after.status, publishAt: after.publishAt, publishedAt: after.publishedAt };
    if (action === 'publish') {
      const outcome = publishOutcome(result.state, revisionId, result.events);
      response['already_published'] = outcome?.outcome === 'already_published';
    }
    return response;
  }

  /**
   * Duplicates an entry (spec section 2): a new entry `{slug}-copy` holding the field values of the
   * source's latest revision as its first draft. When that slug is taken the copy gets the next free one,
   * `{slug}-copy-2`, `{slug}-copy-3`, ... (409 only after MAX_COPY_SLUG_TRIES taken ones). The copy's slug is
   * reserved like any other; import metadata and the assignee are not copied. Idempotent by key.
   */
  async duplicateEntry(principal: Principal, project: ProjectView, sourceEntryId: string, idempotencyKey?: string): Promise<IdempotentResult> {
    await this.entryDoc(project, sourceEntryId);
    const run = async (ids: Record<string, string>): Promise<IdempotentResult> => {
      const entryId = ids['entryId']!;
      const existing = await this.#entryState(entryId);
      if (existing.created) return { status: 201, body: await this.#entryResponse(entryId) };
      const source = await this.#entryState(sourceEntryId);
      const context = this.#context(principal, project);
      const sourceSlug = source.state.exists ? source.state.slug : '';
      let command = duplicateEntry(source.state, { entryId, revisionId: ids['revisionId']!, slug: copySlug(sourceSlug, 1) });
      entryDecider.decide(command, existing.state, context);
      const scope = `entry-slug:${command.formSetId}`;
      // The first free slug of {slug}-copy, {slug}-copy-2, ... (a retry finds the one this entry already holds).
      for (let n = 1; ; n++) {
        command = { ...command, slug: copySlug(sourceSlug, n) };
        try {
          await this.deps.reservations.claim(scope, command.slug, entryId, actorOf(principal), 'slug');
          break;
        } catch (error) {
          if (!(error instanceof DomainError && error.code === 'CONFLICT') || n >= MAX_COPY_SLUG_TRIES) throw error;
        }
      }
      try {
        const result = await this.#entryCommand(entryId, command, context, { actor: actorOf(principal), ...(idempotencyKey ? { idempotencyKey } : {}) });
        await this.#writes.settle(result.position);
      } catch (error) {
        await this.deps.reservations.release(scope, command.slug, entryId, actorOf(principal));
        throw error;
      }
      return { status: 201, body: await this.#entryResponse(entryId) };
    };
    return this.#writes.idempotent(principal, project.projectId, 'duplicate_entry', idempotencyKey, { sourceEntryId }, ['entryId', 'revisionId'], run);
  }

  /**
   * Deletes an entry (tenant_admin, or an agent key of scope full or schema). The slug and every former
   * slug are released afterwards, so a new entry may take them (their redirects are gone with the entry).
   */
  async deleteEntry(principal: Principal, project: ProjectView, entryId: string): Promise<void> {
    await this.entryDoc(project, entryId);
    const result = await this.#entryCommand(entryId, { type: 'delete', entryId }, this.#context(principal, project), { actor: actorOf(principal) });
    const deleted = result.state as ExistingEntry;
    const scope = `entry-slug:${deleted.formSetId}`;
    for (const slug of new Set([deleted.slug, ...deleted.previousSlugs])) await this.deps.reservations.release(scope, slug, entryId, actorOf(principal));
    // Nobody's unsaved typing outlives the entry (the retention sweep ends any this misses).
    await this.deps.workingCopies?.deleteEntry(entryId).catch(() => undefined);
    await this.#writes.settle(result.position);
  }

  /**
   * Renames an entry's slug. The new slug is reserved first (409 when another entry holds it, current
   * or former). The old slug is NOT released: it stays in previousSlugs and answers with a 301 to the
   * new slug, so no other entry may take it while the redirect exists. Renaming back to a former slug
   * is allowed (the entry owns it already). Reservations are freed when the entry is deleted.
   */
  async renameEntry(principal: Principal, project: ProjectView, entryId: string, slug: string): Promise<Record<string, unknown>> {
    const entry = await this.entryDoc(project, entryId);
    const command: EntryCommand = { type: 'rename', entryId, slug };
    const context = this.#context(principal, project);
    const current = await this.#entryState(entryId);
    // Decide first: a refused rename (bad slug, forbidden) reserves nothing.
    const events = entryDecider.decide(command, current.state, context);
    if (events.length > 0) {
      const scope = `entry-slug:${entry.formSetId}`;
      await this.deps.reservations.claim(scope, slug, entryId, actorOf(principal), 'slug');
      const previous = current.state.exists ? current.state.previousSlugs : [];
      try {
        const result = await this.#entryCommand(entryId, command, context, { actor: actorOf(principal) });
        await this.#writes.settle(result.position);
      } catch (error) {
        // Only a slug this entry never had is given back.
        if (!previous.includes(slug)) await this.deps.reservations.release(scope, slug, entryId, actorOf(principal));
        throw error;
      }
    }
    return this.entryDocument(entryId);
  }

  /** Sets or clears import metadata: undefined keeps a value, null clears it (limits of spec section 8). */
  async setImportMetadata(principal: Principal, project: ProjectView, entryId: string, input: { importPath?: string | null | undefined; external?: ExternalIdentity | null | undefined }): Promise<Record<string, unknown>> {
    await this.entryDoc(project, entryId);
    const command: EntryCommand = {
      type: 'setImportMetadata',
      entryId,
      ...(input.importPath === undefined ? {} : { importPath: input.importPath }),
      ...(input.external === undefined ? {} : { external: input.external }),
    };
    const result = await this.#entryCommand(entryId, command, this.#context(principal, project), { actor: actorOf(principal) });
    await this.#writes.settle(result.position);
    return this.entryDocument(entryId);
  }

  /** Assigns an entry to a console user of the project's tenant for review, or clears it (Business plan and above). */
  async assignEntry(principal: Principal, project: ProjectView, entryId: string, userId: string | null): Promise<Record<string, unknown>> {
    await this.entryDoc(project, entryId);
    const command: EntryCommand = { type: 'assign', entryId, userId };
    const context = this.#context(principal, project);
    // Plan and permission first (PLAN_REQUIRED says more than "no such user" below the plan).
    entryDecider.decide(command, (await this.#entryState(entryId)).state, context);
    if (userId !== null) {
      const user = await accessQueries(this.deps.reader).user(userId);
      if (!user || user.tenantId !== project.tenantId || user.disabled) throw invalid(`userId: no active console user ${userId} in this tenant.`, 'Assign to a member of the project\'s tenant.');
    }
    const result = await this.#entryCommand(entryId, command, context, { actor: actorOf(principal) });
    await this.#writes.settle(result.position);
    return this.entryDocument(entryId);
  }

  /**
   * Approves every listed revision with the same publish time (spec section 3 rule 2). The time is
   * checked once (400 for the whole request); then each revision is approved on its own and answered
   * with ok or its error: one failure never hides or undoes the others.
   */
  async bulkSchedule(
    principal: Principal,
    project: ProjectView,
    revisionIds: string[],
    publishAt: unknown,
    options: { onRefused?: (error: DomainError) => Promise<void> } = {},
  ): Promise<{ publishAt: string; succeeded: number; failed: number; results: BulkScheduleResult[] }> {
    // humanApproval: a bulk operation on what the site will serve is a person's, refused as a whole (one refusal, not one per revision).
    requirePersonFor(principal, project.approvalPolicy, 'bulk_schedule', {}, 'schedule revisions in bulk');
    const duplicate = revisionIds.find((id, i) => revisionIds.indexOf(id) !== i);
    if (duplicate !== undefined) throw invalid(`revisionIds: ${duplicate} is listed more than once.`);
    const time: TimeInput = typeof publishAt === 'string' ? { at: publishAt } : (publishAt as TimeInput);
    const at = toUtcInstant(time, 'publishAt');
    if (Date.parse(at) <= this.deps.clock.now().getTime()) throw invalid(`publishAt ${at} is not in the future.`, 'Publish each revision instead, or give a later time.');
    const results: BulkScheduleResult[] = [];
    // One context for the whole batch (who issued each key is read once).
    const context = await this.#approvalContext(principal, project);
    for (const revisionId of revisionIds) {
      try {
        if (!UUID.test(revisionId)) throw notFound(`No revision ${revisionId} in this project.`);
        const done = await this.#revisionAction(principal, project, revisionId, 'approve', { publishAt: { at } }, { ...context, now: this.deps.clock.now() });
        results.push({ revisionId, ok: true, entryId: String(done['entryId']), revision: Number(done['revision']), status: String(done['status']), publishAt: (done['publishAt'] as string | null) ?? null });
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        // A refusal of one revision is recorded like any refused write; the others go on.
        await options.onRefused?.(error);
        results.push({ revisionId, ok: false, error: { code: error.code, message: error.message, ...(error.hint === undefined ? {} : { hint: error.hint }) } });
      }
    }
    const succeeded = results.filter((r) => r.ok).length;
    return { publishAt: at, succeeded, failed: results.length - succeeded, results };
  }

  /**
   * Restores an old revision: its snapshot becomes a new draft revision (the old one is untouched). The
   * snapshot must still fit the form set's current definition (400 naming the field otherwise), so a
   * restore never brings back values the form set no longer accepts. Idempotent by key.
   */
  async restoreRevision(principal: Principal, project: ProjectView, fromRevisionId: string, input: { expectedRevision?: number | undefined }, idempotencyKey?: string): Promise<IdempotentResult> {
    const source = await this.revisionOrFail(project, fromRevisionId);
    const formSet = await this.formSetOrFail(project, source.formSetId);
    // A restore brings back history as it was: rich text of the old revision is carried over (checkRichTextValue).
    await this.#validFields(project, formSet, source.snapshot, source.snapshot);
    const run = async (ids: Record<string, string>): Promise<IdempotentResult> => {
      const revisionId = ids['revisionId']!;
      const existing = await this.#entryState(source.entryId);
      if (!(await this.#hasRevision(existing.state, source.entryId, revisionId))) {
        const command: EntryCommand = {
          type: 'restoreRevision',
          entryId: source.entryId,
          revisionId,
          fromRevisionId,
          source: { revision: source.revision, snapshot: source.snapshot },
          ...(input.expectedRevision === undefined ? {} : { expectedRevision: input.expectedRevision }),
        };
        const result = await this.#entryCommand(source.entryId, command, this.#context(principal, project), { actor: actorOf(principal), ...(idempotencyKey ? { idempotencyKey } : {}) });
        await this.#writes.settle(result.position);
      }
      return { status: 201, body: { ...(await this.#revisionResponse(revisionId)), restoredFrom: { revisionId: fromRevisionId, revision: source.revision } } };
    };
    return this.#writes.idempotent(principal, project.projectId, 'restore_revision', idempotencyKey, { fromRevisionId, ...input }, ['revisionId'], run);
  }

  async #entryState(entryId: string): Promise<{ state: EntryState; created: boolean }> {
    const loaded = await loadAggregate(this.deps.log, entryStream(entryId), entryDecider, this.deps.entrySnapshots);
    return { state: loaded.state, created: loaded.revision !== null };
  }

  /** A command on an entry's stream, loaded through the entry snapshots. */
  #entryCommand(entryId: string, command: EntryCommand, context: EntryContext, append: AppendContext): Promise<CommandResult<EntryState, EntryEvent>> {
    return handleCommand(this.deps.log, entryStream(entryId), entryDecider, command, context, append, { snapshots: this.deps.entrySnapshots });
  }

  /**
   * Whether the entry has the revision already (an idempotent request run again after its append): the
   * aggregate knows its latest and live revisions; an older one is in the read model.
   */
  async #hasRevision(state: EntryState, entryId: string, revisionId: string): Promise<boolean> {
    if (knowsRevision(state, revisionId)) return true;
    const recorded = await this.content.revision(revisionId);
    return recorded?.entryId === entryId;
  }

  async #entryResponse(entryId: string): Promise<Record<string, unknown>> {
    const entry = await this.content.entry(entryId);
    if (!entry) throw notFound(`No entry ${entryId}.`);
    const revision = entry.latestRevision ? await this.#revisionResponse(entry.latestRevision.revisionId) : null;
    return { entry: { id: entryId, slug: entry['slug'], formSetId: entry['formSetId'] }, revision };
  }

  async #revisionResponse(revisionId: string): Promise<Record<string, unknown>> {
    const revision = await this.content.revision(revisionId);
    if (!revision) throw notFound(`No revision ${revisionId}.`);
    return { id: revision.revisionId, revisionId: revision.revisionId, entryId: revision.entryId, revision: revision.revision, status: revision.status, updatedAt: revision.savedAt };
  }

  /**
   * The fields of the revision a save replaces, when the form set has rich text: rich text stored before the
   * rich-text model may be saved back unchanged (one revision document read, whatever the history's length).
   */
  async #richTextBase(formSet: FormSetView, entry: EntryDocHead): Promise<Record<string, unknown> | undefined> {
    if (!entry.latestRevision || !formSet.definition.fields.some((f) => f.type === 'tiptap')) return undefined;
    return (await this.content.revision(entry.latestRevision.revisionId))?.snapshot;
  }

  async #validFields(project: ProjectView, formSet: FormSetView, fields: unknown, previous?: Record<string, unknown>): Promise<Record<string, unknown>> {
    // Only the masters behind this form set's select, radio and multiselect fields (often none).
    const keys = [...new Set(formSet.definition.fields.flatMap((f) => (f.masterEntityKey ? [f.masterEntityKey] : [])))];
    const masters = keys.length === 0 ? [] : await this.content.mastersWithKeys(project.projectId, keys);
    const byKey = new Map(masters.map((m) => [m.key, new Set(m.records.map((r) => r.value))]));
    return assertValidEntryFields({ ...formSet.definition, version: formSet.version } as VersionedFormSetDefinition, project.contentLocales, fields, {
      masterValues: (key: string) => byKey.get(key),
      ...(previous ? { previous } : {}),
    });
  }

  #context(principal: Principal, project: ProjectView): EntryContext {
    const approvalPolicy = project.approvalPolicy ?? DEFAULT_APPROVAL_POLICY;
    const usualApprovalPolicy = strictestOf(approvalPolicy, project.usualApprovalPolicy ?? DEFAULT_APPROVAL_POLICY);
    return { principal, plan: project.plan, approvalPolicy, usualApprovalPolicy, now: this.deps.clock.now() };
  }

  /**
   * The context of an approval or publication: with who issued each agent key of the project, when four eyes is
   * in the project's usual policy (to decide it, or to flag an approval it would have refused while it was off).
   */
  async #approvalContext(principal: Principal, project: ProjectView): Promise<EntryContext> {
    const context = this.#context(principal, project);
    return context.usualApprovalPolicy?.fourEyes ? { ...context, keyIssuers: await this.#keyIssuers.of(this.deps.log, project.projectId) } : context;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Copies of one entry before duplicating answers 409: {slug}-copy to {slug}-copy-100. */
export const MAX_COPY_SLUG_TRIES = 100;
