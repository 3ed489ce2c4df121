import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { DomainError } from '../domain/domain-error.ts';
import { entryDecider, type EntryContext, type EntryState } from '../domain/content/entry/entry-decider.ts';
import { approvalPolicyOf, usualApprovalPolicyOf } from '../../projections/access.ts';
import { KeyIssuersCache } from './key-issuers.ts';
import type { AggregateSnapshots } from './aggregate-snapshots.ts';
import { entryStream } from '../domain/content/entry/entry-events.ts';
import { SCHEDULER } from '../domain/content/entry/entry-workflow.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';
import { handleCommand } from './command-handler.ts';
import { accessQueries } from '../../projections/access-queries.ts';
import { contentQueries } from '../../projections/content-queries.ts';

/**
 * The scheduled-publishing job (spec section 3): every interval (5 minutes by default) it publishes the
 * scheduled revisions whose publish_at has passed. Publishing goes through the entry decider as the
 * system scheduler, so a revision withdrawn or rejected meanwhile is left alone, and two runs never
 * publish one revision twice (the second decision sees it published and emits nothing). The approval is
 * checked again against the project's approval policy in force then (with who issued each agent key, as four
 * eyes compares people): one the policy now refuses is rejected, with the rule and why, instead of published.
 */
export class ScheduledPublisher {
  readonly #delay = new InterruptibleDelay();
  readonly #keyIssuers = new KeyIssuersCache();
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly deps: { log: EventLog; reader: ReadModelReader; clock: Clock; logger: Logger; intervalMs: number; entrySnapshots?: AggregateSnapshots<EntryState> },
  ) {}

  start(): void {
    this.#running ??= (async () => {
      while (!this.#stopped) {
        await this.runOnce().catch((error: unknown) => this.deps.logger.error({ err: error }, 'scheduled publishing failed; retrying next interval'));
        await this.#delay.sleep(this.deps.intervalMs);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#delay.interrupt();
    await this.#running;
  }

  /** Publishes every due revision now; returns how many were published. */
  async runOnce(): Promise<number> {
    const now = this.deps.clock.now();
    let published = 0;
    const accessModel = accessQueries(this.deps.reader);
    const contentModel = contentQueries(this.deps.reader, this.deps.log);
    for (;;) {
      const due = await contentModel.revisionsDueForPublishing(now.toISOString(), 200);
      let progressed = 0;
      for (const revision of due) {
        const project = await accessModel.project(revision.projectId);
        const context: EntryContext = { principal: SCHEDULER, plan: project?.plan ?? 'free', now };
        if (project) {
          context.approvalPolicy = approvalPolicyOf(project);
          context.usualApprovalPolicy = usualApprovalPolicyOf(project);
          if (context.usualApprovalPolicy.fourEyes) context.keyIssuers = await this.#keyIssuers.of(this.deps.log, project.projectId);
        }
        try {
          const result = await handleCommand(
            this.deps.log,
            entryStream(revision.entryId),
            entryDecider,
            { type: 'publishScheduled', entryId: revision.entryId, revisionId: revision.revisionId },
            context,
            { actor: { type: 'system', id: 'scheduler' } },
            { snapshots: this.deps.entrySnapshots },
          );
          // Published, or rejected because the policy in force refuses its approval: either way it left the schedule.
          if (result.events.length > 0) progressed++;
          if (result.events.some((event) => event.type === 'entry.revision-published')) published++;
        } catch (error) {
          // A deleted entry: nothing left to publish.
          if (!(error instanceof DomainError && error.code === 'NOT_FOUND')) throw error;
        }
      }
      // The read model may still list what was just published: stop when a pass changes nothing.
      if (due.length < 200 || progressed === 0) return published;
    }
  }
}
