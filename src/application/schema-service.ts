import type { Actor } from '../event-store/event-store.ts';
import type { Principal } from '../domain/principal.ts';
import { invalid, notFound } from '../domain/domain-error.ts';
import { actorOf } from '../domain/access/caller.ts';
import { assertUserSession, masterDecider, type MasterCommand, type MasterTreeNode } from '../domain/content/master/master-decider.ts';
import { masterStreamId } from '../domain/content/master/master-events.ts';
import { recordLabel, type MasterRecord, type MasterRecordInput } from '../domain/content/master/master-entity.ts';
import { formSetDecider } from '../domain/content/form-set/form-set-decider.ts';
import { formSetStreamId } from '../domain/content/form-set/form-set-events.ts';
import { assertMayApplyBlueprint, assertMayApplyMasterBlueprint } from '../domain/content/blueprint/blueprint-policy.ts';
import {
  assertPlanApplicable,
  blueprintCommands,
  planBlueprint,
  planMasterBlueprint,
  type BlueprintPlan,
  type MasterBlueprintPlan,
} from '../domain/content/blueprint/plan-blueprint.ts';
import { builtInTemplate } from '../domain/content/blueprint/built-in-templates.ts';
import { handleCommand, loadAggregate } from './command-handler.ts';
import type { IdempotentResult } from './idempotency.ts';
import { ProjectWrites, type ProjectServiceDeps } from './project-writes.ts';
import { contentQueries, type ContentQueries } from '../../projections/content-queries.ts';
import type { MasterDoc } from '../../projections/content.ts';
import type { ProjectView } from './content-service.ts';

/** A master as the content read model holds it (records in display order). */
export type MasterView = MasterDoc;

/** How applying was asked for: a preview (writes nothing) or for real, optionally idempotent. */
export interface ApplyOptions {
  dryRun?: boolean;
  idempotencyKey?: string;
}

/** What applying a blueprint created. */
export interface AppliedBlueprint {
  formSets: Array<{ id: string; slug: string }>;
  masters: Array<{ id: string; key: string }>;
}

const formSetScope = (projectId: string) => `form-set-slug:${projectId}`;
const masterScope = (projectId: string) => `master-key:${projectId}`;

/**
 * Use cases on masters (spec section 2) and blueprints/templates (spec section 4.3). As in the content
 * service: every check runs before the first append, unique names (form set slugs, master keys) are
 * reserved in the log before anything is created, and a write returns once the read models show it.
 */
export class SchemaService {
  constructor(
    private readonly deps: ProjectServiceDeps,
  ) {
    this.#writes = new ProjectWrites(deps);
    this.#content = contentQueries(deps.reader, deps.log);
  }

  readonly #writes: ProjectWrites;
  readonly #content: ContentQueries;

  // ------------------------------------------------------------------------------------------------
  // Masters

  async listMasters(project: ProjectView): Promise<MasterView[]> {
    return this.#content.mastersOfProject(project.projectId);
  }

  async masterOrFail(project: ProjectView, masterId: string): Promise<MasterView> {
    const master = await this.#content.master(masterId);
    if (!master || master.projectId !== project.projectId) throw notFound(`No master entity ${masterId} in this project.`);
    return master;
  }

  /** Records in display order with the label resolved for `locale` (default: the project's default locale). */
  async listRecords(project: ProjectView, masterId: string, locale?: string): Promise<{ master: MasterView; locale: string; records: Array<MasterRecord & { label: string }> }> {
    const { locales, defaultLocale } = project.contentLocales;
    if (locale !== undefined && !locales.includes(locale)) {
      throw invalid(`locale: "${locale}" is not a content locale of this project (${locales.join(', ')}).`);
    }
    const master = await this.masterOrFail(project, masterId);
    const resolved = locale ?? defaultLocale;
    return { master, locale: resolved, records: master.records.map((r) => ({ ...r, label: recordLabel(r, resolved, defaultLocale) })) };
  }

  async createMaster(principal: Principal, project: ProjectView, input: { key: unknown; name: unknown; records?: unknown }, idempotencyKey?: string): Promise<IdempotentResult> {
    const run = async (ids: Record<string, string>): Promise<IdempotentResult> => {
      const masterId = ids['masterId']!;
      const command = { type: 'create_master', masterId, projectId: project.projectId, key: input.key, name: input.name, ...(input.records === undefined ? {} : { records: input.records }) } as Extract<MasterCommand, { type: 'create_master' }>;
      const existing = await loadAggregate(this.deps.log, masterStreamId(masterId), masterDecider);
      // A retried idempotent request finds its own master already created.
      if (existing.revision === null) {
        // Decide first (permission and the whole master validated), then reserve the key, then append.
        masterDecider.decide(command, existing.state, this.#context(principal));
        const scope = masterScope(project.projectId);
        const key = command.key;
        await this.deps.reservations.claim(scope, key, masterId, actorOf(principal), 'master key');
        try {
          const result = await handleCommand(this.deps.log, masterStreamId(masterId), masterDecider, command, this.#context(principal), this.#append(principal, idempotencyKey));
          await this.#writes.settle(result.position);
        } catch (error) {
          await this.deps.reservations.release(scope, key, masterId, actorOf(principal));
          throw error;
        }
      }
      return { status: 201, body: masterDetail(await this.masterOrFail(project, masterId)) };
    };
    return this.#writes.idempotent(principal, project.projectId, 'create_master', idempotencyKey, input, ['masterId'], run);
  }

  async createRecord(principal: Principal, project: ProjectView, masterId: string, record: MasterRecordInput, idempotencyKey?: string): Promise<IdempotentResult> {
    await this.masterOrFail(project, masterId);
    const run = async (): Promise<IdempotentResult> => {
      const result = await handleCommand(this.deps.log, masterStreamId(masterId), masterDecider, { type: 'create_master_record', record }, this.#context(principal, project), this.#append(principal, idempotencyKey));
      await this.#writes.settle(result.position);
      const master = await this.masterOrFail(project, masterId);
      return { status: 201, body: { masterId, key: master.key, record: master.records.find((r) => r.value === record.value) ?? null } };
    };
    return this.#writes.idempotent(principal, project.projectId, 'create_master_record', idempotencyKey, { masterId, record }, [], run);
  }

  /** update_master_record: a user session only (spec section 4.4); the domain's refusal names why. */
  async updateRecord(principal: Principal, project: ProjectView, masterId: string, value: string, patch: { labels?: Record<string, string>; order?: number; parent?: string | null }): Promise<MasterView> {
    assertUserSession(principal, 'update_master_record');
    await this.masterOrFail(project, masterId);
    return this.#run(principal, project, masterId, { type: 'update_master_record', value, ...patch });
  }

  /** update_master_tree: a user session only (spec section 4.4). */
  async updateTree(principal: Principal, project: ProjectView, masterId: string, nodes: MasterTreeNode[]): Promise<MasterView> {
    assertUserSession(principal, 'update_master_tree');
    await this.masterOrFail(project, masterId);
    return this.#run(principal, project, masterId, { type: 'update_master_tree', nodes });
  }

  /** Sets site_published_at and appends master.published (the webhook event of spec section 6). */
  async publishMaster(principal: Principal, project: ProjectView, masterId: string): Promise<MasterView> {
    await this.masterOrFail(project, masterId);
    return this.#run(principal, project, masterId, { type: 'publish_master' });
  }

  async #run(principal: Principal, project: ProjectView, masterId: string, command: MasterCommand): Promise<MasterView> {
    const result = await handleCommand(this.deps.log, masterStreamId(masterId), masterDecider, command, this.#context(principal, project), { actor: actorOf(principal) });
    await this.#writes.settle(result.position);
    return this.masterOrFail(project, masterId);
  }

  // ------------------------------------------------------------------------------------------------
  // Blueprints and templates

  /** The plan of a form blueprint against the project: what would be created and every problem. */
  async validateBlueprint(project: ProjectView, document: unknown): Promise<BlueprintPlan> {
    return planBlueprint(document, await this.#existing(project));
  }

  async validateMasterBlueprint(project: ProjectView, document: unknown): Promise<MasterBlueprintPlan> {
    return planMasterBlueprint(document, await this.#existing(project));
  }

  /**
   * Applies a form blueprint: masters first, then form sets, all or nothing as far as the plan goes.
   * dryRun: 200 with the full plan, nothing written. Otherwise 201 with what was created; a resent
   * idempotency key answers the recorded 201 body.
   */
  async applyBlueprint(principal: Principal, project: ProjectView, document: unknown, options: ApplyOptions, operation = 'apply_blueprint'): Promise<IdempotentResult> {
    assertMayApplyBlueprint(principal);
    if (options.dryRun) return { status: 200, body: { dryRun: true, ...preview(planBlueprint(document, await this.#existing(project))) } };
    const ids = idNames(document);
    return this.#writes.idempotent(principal, project.projectId, operation, options.idempotencyKey, { document }, ids, async (assigned) => {
      const plan = planBlueprint(document, await this.#existing(project, assigned));
      return this.#carryOut(principal, project, plan, assigned, options.idempotencyKey);
    });
  }

  async applyMasterBlueprint(principal: Principal, project: ProjectView, document: unknown, options: ApplyOptions): Promise<IdempotentResult> {
    assertMayApplyMasterBlueprint(principal);
    if (options.dryRun) return { status: 200, body: { dryRun: true, ...preview(planMasterBlueprint(document, await this.#existing(project))) } };
    const ids = idNames(document);
    return this.#writes.idempotent(principal, project.projectId, 'apply_master_blueprint', options.idempotencyKey, { document }, ids, async (assigned) => {
      const plan = planMasterBlueprint(document, await this.#existing(project, assigned));
      return this.#carryOut(principal, project, plan, assigned, options.idempotencyKey);
    });
  }

  /** A built-in template is a form blueprint; applying it is applying that blueprint. */
  async applyTemplate(principal: Principal, project: ProjectView, templateId: string, options: ApplyOptions): Promise<IdempotentResult> {
    assertMayApplyBlueprint(principal);
    const template = builtInTemplate(templateId);
    return this.applyBlueprint(principal, project, template.blueprint, options, `apply_template:${template.id}`);
  }

  /**
   * Reserves every master key and form set slug, then creates masters, then form sets. A clash while
   * reserving releases what was claimed and answers CONFLICT; nothing has been created by then.
   */
  async #carryOut(principal: Principal, project: ProjectView, plan: BlueprintPlan | MasterBlueprintPlan, ids: Record<string, string>, idempotencyKey: string | undefined): Promise<IdempotentResult> {
    assertPlanApplicable(plan);
    const masterIds = plan.masters.filter((m) => m.action === 'create').map((m) => ids[`master:${m.key}`]!);
    const formSetIds = ('formSets' in plan ? plan.formSets : []).map((f) => ids[`formSet:${f.slug}`]!);
    const queue = [...masterIds, ...formSetIds];
    const commands = blueprintCommands(plan, { projectId: project.projectId, newId: () => queue.shift()! });
    const actor = actorOf(principal);
    const claims = [
      ...commands.masters.map((c) => ({ scope: masterScope(project.projectId), key: c.key, owner: c.masterId, what: 'master key' })),
      ...commands.formSets.map((c) => ({ scope: formSetScope(project.projectId), key: c.definition.slug, owner: c.definition.id, what: 'form set slug' })),
    ];
    const claimed: typeof claims = [];
    const created = new Set<string>();
    const releaseUncreated = async () => {
      for (const c of claimed) if (!created.has(c.owner)) await this.deps.reservations.release(c.scope, c.key, c.owner, actor);
    };
    let position: bigint | null = null;
    try {
      for (const c of claims) {
        await this.deps.reservations.claim(c.scope, c.key, c.owner, actor, c.what);
        claimed.push(c);
      }
      const context = this.#context(principal);
      const append = this.#append(principal, idempotencyKey);
      for (const command of commands.masters) {
        const stream = masterStreamId(command.masterId);
        // A retry of the same idempotent request skips what it already created.
        if ((await loadAggregate(this.deps.log, stream, masterDecider)).revision === null) {
          position = (await handleCommand(this.deps.log, stream, masterDecider, command, context, append)).position;
        }
        created.add(command.masterId);
      }
      for (const command of commands.formSets) {
        const stream = formSetStreamId(command.definition.id);
        if ((await loadAggregate(this.deps.log, stream, formSetDecider)).revision === null) {
          position = (await handleCommand(this.deps.log, stream, formSetDecider, command, { principal }, append)).position;
        }
        created.add(command.definition.id);
      }
    } catch (error) {
      await releaseUncreated();
      throw error;
    }
    await this.#writes.settle(position);
    const body: AppliedBlueprint = {
      formSets: commands.formSets.map((c) => ({ id: c.definition.id, slug: c.definition.slug })),
      masters: commands.masters.map((c) => ({ id: c.masterId, key: c.key })),
    };
    return { status: 201, body };
  }

  /**
   * The project's form set slugs and master keys. Names reserved by this very request's ids (a retried
   * idempotent request that got part way) do not count as clashes.
   */
  async #existing(project: ProjectView, own: Record<string, string> = {}): Promise<{ formSetSlugs: string[]; masterKeys: string[] }> {
    const [formSets, masters] = await Promise.all([this.#content.allFormSetsOfProject(project.projectId), this.#content.allMastersOfProject(project.projectId)]);
    const ownIds = new Set(Object.values(own));
    const slugs = formSets.filter((f) => !ownIds.has(f.formSetId)).map((f) => f.slug);
    const keys = masters.filter((m) => !ownIds.has(m.masterId)).map((m) => m.key);
    // Names claimed but not yet visible in the read models, by this request: not clashes either.
    for (const [name, id] of Object.entries(own)) {
      const [kind, value] = splitOnce(name);
      if (kind === 'formSet' && (await this.deps.reservations.ownerOf(formSetScope(project.projectId), value)) === id) remove(slugs, value);
      if (kind === 'master' && (await this.deps.reservations.ownerOf(masterScope(project.projectId), value)) === id) remove(keys, value);
    }
    return { formSetSlugs: slugs, masterKeys: keys };
  }

  // ------------------------------------------------------------------------------------------------

  #context(principal: Principal, project?: ProjectView) {
    return { principal, now: this.deps.clock.now().toISOString(), ...(project?.approvalPolicy ? { approvalPolicy: project.approvalPolicy } : {}) };
  }

  #append(principal: Principal, idempotencyKey: string | undefined): { actor: Actor; idempotencyKey?: string } {
    return { actor: actorOf(principal), ...(idempotencyKey ? { idempotencyKey } : {}) };
  }
}

/** The master as the API shows it. */
export function masterDetail(master: MasterView): Record<string, unknown> {
  return {
    id: master.masterId,
    key: master.key,
    name: master.name,
    recordCount: master.recordCount,
    records: master.records,
    sitePublishedAt: master.sitePublishedAt,
    published: master.sitePublishedAt !== null,
    createdAt: master.createdAt,
    updatedAt: master.updatedAt,
  };
}

/** The full preview of a plan: what would be created (definitions and records included) and every problem. */
export function preview(plan: BlueprintPlan | MasterBlueprintPlan): Record<string, unknown> {
  return {
    ok: plan.ok,
    ...('formSets' in plan
      ? { formSets: plan.formSets.map((f) => ({ slug: f.slug, name: f.name, fieldCount: f.fieldCount, blockCount: f.blockCount, masterKeys: f.masterKeys, definition: f.draft })) }
      : {}),
    masters: plan.masters.map((m) => ({ key: m.key, name: m.name, action: m.action, recordCount: m.recordCount, records: m.records })),
    problems: plan.problems,
    warnings: plan.warnings,
  };
}

/**
 * The ids an application may create, named by what they are for (`master:<key>`, `formSet:<slug>`), so
 * a retried idempotent request maps each master and form set to the id it was given the first time.
 */
function idNames(document: unknown): string[] {
  const doc = typeof document === 'object' && document !== null ? (document as Record<string, unknown>) : {};
  const names = new Set<string>();
  const collect = (list: unknown, property: string, prefix: string) => {
    if (!Array.isArray(list)) return;
    for (const item of list) {
      const value = typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[property] : undefined;
      if (typeof value === 'string') names.add(`${prefix}:${value}`);
    }
  };
  collect(doc['masters'], 'key', 'master');
  collect(doc['formSets'], 'slug', 'formSet');
  return [...names];
}

function splitOnce(name: string): [string, string] {
  const at = name.indexOf(':');
  return [name.slice(0, at), name.slice(at + 1)];
}

function remove(list: string[], value: string): void {
  const at = list.indexOf(value);
  if (at >= 0) list.splice(at, 1);
}
