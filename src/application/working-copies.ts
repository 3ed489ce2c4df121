/**
 * Working copies (src/working-copies/working-copy-store.ts) as the admin API offers them: a console user keeps
 * what they type in an entry on the server while they type, reads it back when the editor opens again (on any
 * device), and sees who else has unsaved typing in the same entry. Saving a revision of the entry ends the
 * saver's working copy (ContentService.saveRevision); deleting the entry ends every one; the retention sweep
 * ends those left untouched for WORKING_COPY_RETENTION_DAYS.
 */
import type { Clock } from '../clock.ts';
import type { Principal } from '../domain/principal.ts';
import { invalid, notFound } from '../domain/domain-error.ts';
import { actorOf } from '../domain/access/caller.ts';
import type { Logger } from '../logging/logger.ts';
import type { WorkingCopy, WorkingCopyHead, WorkingCopyOwner, WorkingCopyStore } from '../working-copies/working-copy-store.ts';
import type { ContentService, ProjectView } from './content-service.ts';

export interface WorkingCopiesDeps {
  store: WorkingCopyStore;
  content: ContentService;
  clock: Clock;
}

export class WorkingCopies {
  constructor(private readonly deps: WorkingCopiesDeps) {}

  /** The caller's working copy of the entry; 404 NOT_FOUND when they have none. */
  async get(principal: Principal, project: ProjectView, entryId: string): Promise<WorkingCopy> {
    await this.deps.content.entryOrFail(project, entryId);
    const copy = await this.deps.store.get(entryId, ownerOf(principal));
    if (!copy) throw notFound(`You have no working copy of entry ${entryId}: what you typed was saved as a revision, or nothing was typed.`);
    return copy;
  }

  /**
   * Keeps what the caller typed, based on `baseRevision` of the entry (at most its latest revision). Answers the
   * entry's latest revision beside it: a later one than the base means someone saved meanwhile, which the editor
   * shows at once rather than at the next save.
   */
  async keep(principal: Principal, project: ProjectView, entryId: string, input: { fields: Record<string, unknown>; baseRevision: number }): Promise<WorkingCopyHead & { latestRevision: number }> {
    const entry = await this.deps.content.entryOrFail(project, entryId);
    const latest = entry.latestRevision?.revision ?? 0;
    if (input.baseRevision > latest) throw invalid(`baseRevision: entry ${entryId} has no revision ${input.baseRevision} (its latest is ${latest}).`);
    const now = this.deps.clock.now().toISOString();
    const copy: WorkingCopy = { projectId: project.projectId, entryId, owner: ownerOf(principal), baseRevision: input.baseRevision, startedAt: now, savedAt: now, fields: input.fields };
    await this.deps.store.put(copy);
    const { fields: _fields, ...head } = copy;
    return { ...head, latestRevision: latest };
  }

  /** Ends the caller's working copy (idempotent). */
  async discard(principal: Principal, project: ProjectView, entryId: string): Promise<void> {
    await this.deps.content.entryOrFail(project, entryId);
    await this.deps.store.delete(entryId, ownerOf(principal));
  }

  /** Everyone's unsaved typing in the entry, without what they typed: who, since when, based on which revision. */
  async list(project: ProjectView, entryId: string): Promise<WorkingCopyHead[]> {
    await this.deps.content.entryOrFail(project, entryId);
    return (await this.deps.store.list(entryId)).filter((copy) => copy.projectId === project.projectId);
  }
}

export function ownerOf(principal: Principal): WorkingCopyOwner {
  const actor = actorOf(principal);
  if (actor.type === 'operator') throw new Error('operators keep no working copies');
  return { type: actor.type, id: actor.id };
}

/**
 * Ends working copies left untouched for the retention period, once at start and then every hour: a working
 * copy is a comfort while typing, not a place to keep content.
 */
export class WorkingCopyRetention {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> = Promise.resolve();

  constructor(private readonly options: { store: WorkingCopyStore; clock: Clock; logger: Logger; retentionDays: number; everyMs?: number }) {}

  start(): void {
    const sweep = () => {
      this.#running = this.sweep().then(
        () => undefined,
        (error: unknown) => this.options.logger.warn({ err: error }, 'working copies: the retention sweep failed; the next one tries again'),
      );
    };
    sweep();
    this.#timer = setInterval(sweep, this.options.everyMs ?? 3_600_000);
    this.#timer.unref();
  }

  /** Deletes the copies last kept before the retention period; answers how many. */
  async sweep(): Promise<number> {
    const before = new Date(this.options.clock.now().getTime() - this.options.retentionDays * 86_400_000).toISOString();
    const deleted = await this.options.store.deleteSavedBefore(before);
    if (deleted > 0) this.options.logger.info({ deleted, before }, 'working copies: ended those untouched for the retention period');
    return deleted;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }
}
