import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { Actor } from '../event-store/event-store.ts';
import type { RefusalSubject } from '../domain/domain-error.ts';
import type { ApprovalRule } from '../domain/approval-policy.ts';
import { entryStream } from '../domain/content/entry/entry-events.ts';
import { MAX_REFUSAL_SUBJECTS, projectRefusalsStream, tenantRefusalsStream, writeRefused, type RefusalCode, type RefusalReason, type WriteRefused } from '../domain/refusal-events.ts';

/** How long refusals of one (actor, operation, code) are counted into one event after the first is appended. */
export const REFUSAL_WINDOW_MS = 60_000;
/** Windows open at once, at most: beyond, the oldest is closed early (its count appended), so memory stays bounded. */
export const MAX_OPEN_REFUSAL_WINDOWS = 10_000;

/** One refused write, as the one who refused it knows it. */
export interface Refusal {
  tenantId: string;
  /** The project the write acted in, when it acted in one. */
  projectId?: string | undefined;
  actor: Actor;
  /** The admin API operation (operationId). */
  operation: string;
  code: RefusalCode;
  reason: RefusalReason;
  rule?: ApprovalRule | undefined;
  message: string;
  /**
   * What it was about. `verified`: the service loaded it (an entry, a revision), so a refusal about an entry may
   * go into the entry's history; otherwise it is what the request named, filed in the project's refusal stream.
   */
  subject?: { ids: RefusalSubject; verified: boolean } | undefined;
}

interface Window {
  key: string;
  refusal: Refusal;
  openedAt: number;
  /** Refusals after the first, not yet appended. */
  count: number;
  firstAt: string | null;
  lastAt: string | null;
  subjects: Map<string, RefusalSubject>;
}

/**
 * Records refused writes in the log (write.refused, src/domain/refusal-events.ts), aggregated per actor,
 * operation and code, so that a flood of refusals cannot bloat the log: the first refusal of a window
 * (REFUSAL_WINDOW_MS) is appended at once, before the caller gets its 403; the further ones of the window are
 * counted in memory and appended as one event when the window ends (when the next refusal or the periodic sweep
 * finds it over, or when the service stops). A steady flood therefore costs two events per window per actor,
 * operation and code, whatever its rate.
 *
 * Crash safety: every window's first refusal is in the log before it is answered; what a crash loses is the
 * count of the further refusals of the windows open at that moment (at most REFUSAL_WINDOW_MS of them per actor,
 * operation and code; a clean stop appends them). Each process counts its own refusals.
 */
export class RefusalRecorder {
  readonly #windows = new Map<string, Window>();
  readonly #recorded = new WeakSet<object>();
  readonly #windowMs: number;
  readonly #maxOpen: number;
  #timer: NodeJS.Timeout | undefined;
  /** Appends one after another, in the order of the refusals, so a stop waits for every one. */
  #appending: Promise<void> = Promise.resolve();

  constructor(private readonly deps: { log: EventLog; clock: Clock; logger: Logger; windowMs?: number; maxOpenWindows?: number }) {
    this.#windowMs = deps.windowMs ?? REFUSAL_WINDOW_MS;
    this.#maxOpen = deps.maxOpenWindows ?? MAX_OPEN_REFUSAL_WINDOWS;
  }

  /** Sweeps ended windows periodically (every tenth of a window, at least every 5 s), so a count is appended soon after its window ends. */
  start(): void {
    this.#timer ??= setInterval(() => void this.flushDue(), Math.min(5_000, Math.max(100, this.#windowMs / 10)));
    this.#timer.unref();
  }

  /** Appends the count of every open window, then stops sweeping. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    for (const window of [...this.#windows.values()]) this.#close(window);
    await this.#appending;
  }

  /** Whether this error was recorded already (by a layer that knew more of it): the next layer does not record it again. */
  isRecorded(error: unknown): boolean {
    return typeof error === 'object' && error !== null && this.#recorded.has(error);
  }

  /**
   * Records a refusal: the first of its window is appended before this returns (its log position is returned, for
   * a caller that answers once the read models show it); a further one is counted (null). A failure to append is
   * logged, never the caller's failure (the refusal is answered either way). `error`, when given, is remembered as
   * recorded.
   */
  async record(refusal: Refusal, error?: unknown): Promise<bigint | null> {
    if (typeof error === 'object' && error !== null) this.#recorded.add(error);
    const now = this.deps.clock.now();
    this.#closeEnded(now.getTime());
    const key = JSON.stringify([refusal.projectId ?? `tenant:${refusal.tenantId}`, refusal.actor.type, refusal.actor.id, refusal.operation, refusal.code]);
    const open = this.#windows.get(key);
    if (open) {
      const at = now.toISOString();
      open.count += 1;
      open.firstAt ??= at;
      open.lastAt = at;
      const subject = refusal.subject?.ids;
      if (subject && open.subjects.size < MAX_REFUSAL_SUBJECTS) open.subjects.set(JSON.stringify(subject), { ...subject });
      return null;
    }
    if (this.#windows.size >= this.#maxOpen) this.#close(this.#windows.values().next().value!);
    this.#windows.set(key, { key, refusal, openedAt: now.getTime(), count: 0, firstAt: null, lastAt: null, subjects: new Map() });
    const at = now.toISOString();
    const verifiedEntry = refusal.subject?.verified ? refusal.subject.ids.entryId : undefined;
    const stream = verifiedEntry ? entryStream(verifiedEntry) : this.#streamOf(refusal);
    // After the counts of the windows that just ended, so the log reads in the order the refusals happened.
    const appended = this.#appending.then(() => this.#append(stream, refusal, { count: 1, firstAt: at, lastAt: at, repeated: false, ...(refusal.subject ? { subject: { ...refusal.subject.ids } } : {}) }));
    this.#appending = appended.then(() => undefined, () => undefined);
    return appended.catch((failure: unknown) => {
      // Not recorded: the next refusal opens a window again and tries once more.
      if (this.#windows.get(key)?.count === 0) this.#windows.delete(key);
      this.deps.logger.error({ err: failure, operation: refusal.operation, actor: refusal.actor }, 'could not record a refused write in the log');
      return null;
    });
  }

  /** Appends the counts of the windows that have ended by now. */
  async flushDue(): Promise<void> {
    this.#closeEnded(this.deps.clock.now().getTime());
    await this.#appending;
  }

  #closeEnded(now: number): void {
    for (const window of [...this.#windows.values()]) if (now - window.openedAt >= this.#windowMs) this.#close(window);
  }

  /** Takes the window out, and appends its count when it counted any refusal after the first. */
  #close(window: Window): void {
    if (this.#windows.get(window.key) === window) this.#windows.delete(window.key);
    if (window.count === 0) return;
    const { refusal } = window;
    const fields = { count: window.count, firstAt: window.firstAt!, lastAt: window.lastAt!, repeated: true, ...(window.subjects.size > 0 ? { subjects: [...window.subjects.values()] } : {}) };
    this.#appending = this.#appending
      .then(async () => void (await this.#append(this.#streamOf(refusal), refusal, fields)))
      .catch((failure: unknown) => this.deps.logger.error({ err: failure, operation: refusal.operation, actor: refusal.actor, count: window.count }, 'could not record a count of refused writes in the log'));
  }

  #streamOf(refusal: Refusal): string {
    return refusal.projectId ? projectRefusalsStream(refusal.projectId) : tenantRefusalsStream(refusal.tenantId);
  }

  async #append(stream: string, refusal: Refusal, fields: Pick<WriteRefused, 'count' | 'firstAt' | 'lastAt' | 'repeated' | 'subject' | 'subjects'>): Promise<bigint> {
    const data: WriteRefused = {
      tenantId: refusal.tenantId,
      ...(refusal.projectId ? { projectId: refusal.projectId } : {}),
      operation: refusal.operation.slice(0, 100),
      code: refusal.code,
      reason: refusal.reason,
      ...(refusal.rule ? { rule: refusal.rule } : {}),
      message: refusal.message.slice(0, 2000),
      ...fields,
    };
    return (await this.deps.log.append(stream, [{ type: writeRefused.type, data }], 'any', { actor: { type: refusal.actor.type, id: refusal.actor.id } })).position;
  }
}
