import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { Principal } from '../domain/principal.ts';
import type { Plan } from '../domain/plans.ts';
import { invalid, notFound } from '../domain/domain-error.ts';
import { actorOf } from '../domain/access/caller.ts';
import { assertCan } from '../domain/access/permissions.ts';
import { entryDecider, publishOutcome, type EntryCommand, type EntryState } from '../domain/content/entry/entry-decider.ts';
import { entryStream } from '../domain/content/entry/entry-events.ts';
import { validateSlug } from '../domain/content/entry/slug.ts';
import { formSetDecider } from '../domain/content/form-set/form-set-decider.ts';
import { formSetStreamId } from '../domain/content/form-set/form-set-events.ts';
import { assertValidEntryFields } from '../domain/content/form-set/field-validation.ts';
import type { VersionedFormSetDefinition } from '../domain/content/form-set/form-set-definition.ts';
import type { ContentLocales } from '../domain/content/form-set/locale-code.ts';
import { handleCommand, loadAggregate } from './command-handler.ts';
import type { Idempotency, IdempotentResult } from './idempotency.ts';
import type { ProjectionWatermark } from './projection-watermark.ts';
import type { Reservations } from './reservations.ts';

/** The project a request acts in, as the access read model holds it. */
export interface ProjectView {
  projectId: string;
  tenantId: string;
  plan: Plan;
  contentLocales: ContentLocales;
}

export interface FormSetView {
  formSetId: string;
  projectId: string;
  slug: string;
  name: string;
  description: string | null;
  definition: VersionedFormSetDefinition;
  version: number;
}

export interface RevisionView {
  revisionId: string;
  entryId: string;
  projectId: string;
  formSetId: string;
  revision: number;
  status: string;
  snapshot: Record<string, unknown>;
  savedAt: string;
  publishAt: string | null;
  publishedAt: string | null;
}

export type RevisionAction = 'submit' | 'approve' | 'reject' | 'withdraw' | 'reopen' | 'publish';

/** How long a write waits for the read models to show it (read your writes). */
const READ_YOUR_WRITES_MS = 3000;

/**
 * Use cases on form sets, entries and revisions. Everything is checked before the first append
 * (permission, slug rules, field values), so bad input writes nothing; a write returns once the read
 * models show it, so the caller's next read sees its own write.
 */
export class ContentService {
  constructor(
    private readonly deps: {
      log: EventLog;
      reader: ReadModelReader;
      reservations: Reservations;
      idempotency: Idempotency;
      watermark: ProjectionWatermark;
      clock: Clock;
    },
  ) {}

  async createFormSet(principal: Principal, project: ProjectView, definition: Record<string, unknown>, idempotencyKey?: string): Promise<IdempotentResult> {
    assertCan(principal, 'form-sets.write');
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
        await this.#settle(result.position);
      } catch (error) {
        await this.deps.reservations.release(scope, slug, formSetId, actorOf(principal));
        throw error;
      }
      return { status: 201, body: await this.formSetOrFail(project, formSetId) };
    };
    return this.#idempotent(principal, project, 'create_form_set', idempotencyKey, definition, ['formSetId'], run);
  }

  async updateFormSet(principal: Principal, project: ProjectView, formSetId: string, definition: Record<string, unknown>, expectedVersion?: number): Promise<FormSetView> {
    const current = await this.formSetOrFail(project, formSetId);
    const candidate = { ...definition, id: formSetId };
    const newSlug = typeof definition['slug'] === 'string' ? definition['slug'] : current.slug;
    const scope = `form-set-slug:${project.projectId}`;
    const command = { type: 'update_form_set' as const, definition: candidate, ...(expectedVersion === undefined ? {} : { expectedVersion }) };
    formSetDecider.decide(command, { status: 'active', projectId: project.projectId, definition: current.definition, version: current.version } as never, { principal });
    if (newSlug !== current.slug) await this.deps.reservations.claim(scope, newSlug, formSetId, actorOf(principal), 'form set slug');
    const result = await handleCommand(this.deps.log, formSetStreamId(formSetId), formSetDecider, command, { principal }, { actor: actorOf(principal) });
    if (newSlug !== current.slug) await this.deps.reservations.release(scope, current.slug, formSetId, actorOf(principal));
    await this.#settle(result.position);
    return this.formSetOrFail(project, formSetId);
  }

  async deleteFormSet(principal: Principal, project: ProjectView, formSetId: string): Promise<void> {
    const current = await this.formSetOrFail(project, formSetId);
    const result = await handleCommand(this.deps.log, formSetStreamId(formSetId), formSetDecider, { type: 'delete_form_set' }, { principal }, { actor: actorOf(principal) });
    await this.deps.reservations.release(`form-set-slug:${project.projectId}`, current.slug, formSetId, actorOf(principal));
    await this.#settle(result.position);
  }

  async createEntry(
    principal: Principal,
    project: ProjectView,
    formSetId: string,
    input: { slug: unknown; fields: unknown; importPath?: string; external?: { sourceType?: string; entityType?: string; externalId: string } },
    idempotencyKey?: string,
  ): Promise<IdempotentResult> {
    assertCan(principal, 'entries.write');
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
        const result = await handleCommand(this.deps.log, entryStream(entryId), entryDecider, command, context, { actor: actorOf(principal), ...(idempotencyKey ? { idempotencyKey } : {}) });
        await this.#settle(result.position);
      } catch (error) {
        await this.deps.reservations.release(scope, slug, entryId, actorOf(principal));
        throw error;
      }
      return { status: 201, body: await this.#entryResponse(entryId) };
    };
    return this.#idempotent(principal, project, 'create_entry', idempotencyKey, { formSetId, ...input }, ['entryId', 'revisionId'], run);
  }

  async saveRevision(principal: Principal, project: ProjectView, entryId: string, input: { fields: unknown; expectedRevision?: number }, idempotencyKey?: string): Promise<IdempotentResult> {
    assertCan(principal, 'revisions.save');
    const entry = await this.#entryDoc(project, entryId);
    const formSet = await this.formSetOrFail(project, entry.formSetId);
    const snapshot = await this.#validFields(project, formSet, input.fields ?? {});
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
      if (!(existing.state.exists && existing.state.revisions.some((r) => r.revisionId === revisionId))) {
        const result = await handleCommand(this.deps.log, entryStream(entryId), entryDecider, command, this.#context(principal, project), { actor: actorOf(principal), ...(idempotencyKey ? { idempotencyKey } : {}) });
        await this.#settle(result.position);
      }
      return { status: 201, body: await this.#revisionResponse(revisionId) };
    };
    return this.#idempotent(principal, project, 'save_revision', idempotencyKey, { entryId, ...input }, ['revisionId'], run);
  }

  async revisionAction(principal: Principal, project: ProjectView, revisionId: string, action: RevisionAction, body: { revision?: number; publishAt?: unknown; reason?: string }): Promise<Record<string, unknown>> {
    const revision = await this.revisionOrFail(project, revisionId);
    const common = { entryId: revision.entryId, revisionId, ...(body.revision === undefined ? {} : { revision: body.revision }) };
    const command: EntryCommand =
      action === 'submit' ? { type: 'submitForReview', ...common }
      : action === 'approve' ? { type: 'approve', ...common, ...(body.publishAt === undefined ? {} : { publishAt: body.publishAt as never }) }
      : action === 'reject' ? { type: 'reject', ...common, ...(body.reason === undefined ? {} : { reason: body.reason }) }
      : action === 'withdraw' ? { type: 'withdraw', ...common }
      : action === 'reopen' ? { type: 'reopen', ...common }
      : { type: 'publish', ...common, revision: body.revision ?? revision.revision };
    const result = await handleCommand(this.deps.log, entryStream(revision.entryId), entryDecider, command, this.#context(principal, project), { actor: actorOf(principal) });
    await this.#settle(result.position);
    const after = await this.revisionOrFail(project, revisionId);
    const response: Record<string, unknown> = { id: revisionId, revisionId, entryId: revision.entryId, revision: after.revision, status: after.status, publishAt: after.publishAt, publishedAt: after.publishedAt };
    if (action === 'publish') {
      const outcome = publishOutcome(result.state, revisionId, result.events);
      response['already_published'] = outcome?.outcome === 'already_published';
    }
    return response;
  }

  async formSetOrFail(project: ProjectView, formSetId: string): Promise<FormSetView> {
    const formSet = await this.deps.reader.get<FormSetView & Record<string, unknown>>('content', 'form_sets', formSetId);
    if (!formSet || formSet.projectId !== project.projectId) throw notFound(`No form set ${formSetId} in this project.`);
    return formSet;
  }

  async revisionOrFail(project: ProjectView, revisionId: string): Promise<RevisionView> {
    const revision = await this.deps.reader.get<RevisionView & Record<string, unknown>>('content', 'revisions', revisionId);
    if (!revision || revision.projectId !== project.projectId) throw notFound(`No revision ${revisionId} in this project.`);
    // A revision of a deleted entry is gone, whatever a half-replayed read model may still hold.
    if (!(await this.deps.reader.get('content', 'entries', revision.entryId))) throw notFound(`No revision ${revisionId} in this project.`);
    return revision;
  }

  async #entryDoc(project: ProjectView, entryId: string): Promise<{ entryId: string; formSetId: string; projectId: string }> {
    const entry = await this.deps.reader.get<{ entryId: string; formSetId: string; projectId: string }>('content', 'entries', entryId);
    if (!entry || entry.projectId !== project.projectId) throw notFound(`No entry ${entryId} in this project.`);
    return entry;
  }

  async #entryState(entryId: string): Promise<{ state: EntryState; created: boolean }> {
    const loaded = await loadAggregate(this.deps.log, entryStream(entryId), entryDecider);
    return { state: loaded.state, created: loaded.revision !== null };
  }

  async #entryResponse(entryId: string): Promise<Record<string, unknown>> {
    const entry = await this.deps.reader.get<Record<string, unknown> & { latestRevision: { revisionId: string } | null }>('content', 'entries', entryId);
    if (!entry) throw notFound(`No entry ${entryId}.`);
    const revision = entry.latestRevision ? await this.#revisionResponse(entry.latestRevision.revisionId) : null;
    return { entry: { id: entryId, slug: entry['slug'], formSetId: entry['formSetId'] }, revision };
  }

  async #revisionResponse(revisionId: string): Promise<Record<string, unknown>> {
    const revision = await this.deps.reader.get<RevisionView & Record<string, unknown>>('content', 'revisions', revisionId);
    if (!revision) throw notFound(`No revision ${revisionId}.`);
    return { id: revision.revisionId, revisionId: revision.revisionId, entryId: revision.entryId, revision: revision.revision, status: revision.status, updatedAt: revision.savedAt };
  }

  async #validFields(project: ProjectView, formSet: FormSetView, fields: unknown): Promise<Record<string, unknown>> {
    const masters = await this.deps.reader.find<{ key: string; records: Array<{ value: string }> }>('content', 'masters', { filter: { projectId: project.projectId }, limit: 1000 });
    const byKey = new Map(masters.map((m) => [m.key, new Set(m.records.map((r) => r.value))]));
    return assertValidEntryFields({ ...formSet.definition, version: formSet.version } as VersionedFormSetDefinition, project.contentLocales, fields, {
      masterValues: (key: string) => byKey.get(key),
    });
  }

  #context(principal: Principal, project: ProjectView) {
    return { principal, plan: project.plan, now: this.deps.clock.now() };
  }

  async #settle(position: bigint | null): Promise<void> {
    if (position !== null) await this.deps.watermark.waitFor(position, READ_YOUR_WRITES_MS);
  }

  async #idempotent(
    principal: Principal,
    project: ProjectView,
    operation: string,
    key: string | undefined,
    request: unknown,
    ids: string[],
    run: (ids: Record<string, string>) => Promise<IdempotentResult>,
  ): Promise<IdempotentResult> {
    if (key === undefined) return run(Object.fromEntries(ids.map((name) => [name, randomUUID()])));
    const { replayed: _replayed, ...result } = await this.deps.idempotency.run({ scope: project.projectId, operation, key, request, ids, actor: actorOf(principal) }, run);
    return result;
  }
}
