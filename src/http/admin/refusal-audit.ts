import type { Context } from 'koa';
import { DomainError, type RefusalSubject } from '../../domain/domain-error.ts';
import { ApprovalRefused } from '../../domain/approval-policy.ts';
import { REFUSAL_CODES, type RefusalCode } from '../../domain/refusal-events.ts';
import { actorOf } from '../../domain/access/caller.ts';
import { READ_YOUR_WRITES_MS } from '../../application/project-writes.ts';
import { HttpError } from '../errors/http-error.ts';
import type { AdminDeps, AdminState } from './admin-context.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Path parameters that name what a write was about, as a refusal's subject names them. */
const SUBJECT_PARAMS: Readonly<Record<string, keyof RefusalSubject>> = {
  entryId: 'entryId',
  revisionId: 'revisionId',
  formSetId: 'formSetId',
  masterId: 'masterId',
  assetId: 'assetId',
  formId: 'contactFormId',
};

/**
 * Records a refused admin write (a non-GET answered 403 FORBIDDEN by the caller's role or key scope, or
 * HUMAN_APPROVAL_REQUIRED / FOUR_EYES_REQUIRED by the approval policy) in the audit trail, through the
 * RefusalRecorder (aggregated per actor, operation and code). Unauthenticated requests are not recorded (they
 * are nobody's: a flood of them must not reach the log), nor plan gates (PLAN_REQUIRED). A failure to record is
 * logged by the recorder; the caller gets its 403 either way.
 */
export async function recordRefusedWrite(deps: Pick<AdminDeps, 'refusals' | 'watermark' | 'logger'>, ctx: Context, operation: string, error: unknown): Promise<void> {
  const { refusals, logger } = deps;
  if (!refusals || refusals.isRecorded(error)) return;
  const code = refusalCodeOf(error);
  const state = ctx.state as Partial<AdminState>;
  const principal = state.principal;
  if (!code || !principal) return;
  const verified = error instanceof DomainError ? error.subject : undefined;
  const named = namedSubject(ctx.params as Record<string, string> | undefined);
  const subject = verified ? { ids: verified, verified: true } : named ? { ids: named, verified: false } : undefined;
  try {
    const position = await refusals.record(
      {
        tenantId: principal.tenantId,
        projectId: state.project?.projectId,
        actor: actorOf(principal),
        operation,
        code,
        reason: code === 'FORBIDDEN' ? (principal.kind === 'agent' ? 'scope' : 'role') : 'policy',
        rule: error instanceof ApprovalRefused ? error.rule : undefined,
        message: (error as Error).message,
        subject,
      },
      error,
    );
    // Answered once the audit log shows it, as every write is (read your writes).
    if (position !== null) await deps.watermark.waitFor(position, READ_YOUR_WRITES_MS, ['audit-trail']);
  } catch (failure) {
    logger.error({ err: failure, operation }, 'could not record a refused write');
  }
}

function refusalCodeOf(error: unknown): RefusalCode | null {
  const code = error instanceof DomainError ? error.code : error instanceof HttpError && error.status === 403 ? error.code : null;
  return code !== null && (REFUSAL_CODES as readonly string[]).includes(code) ? (code as RefusalCode) : null;
}

function namedSubject(params: Record<string, string> | undefined): RefusalSubject | undefined {
  const subject: RefusalSubject = {};
  for (const [param, field] of Object.entries(SUBJECT_PARAMS)) {
    const value = params?.[param];
    if (typeof value === 'string' && UUID.test(value)) (subject as Record<string, string>)[field] = value.toLowerCase();
  }
  return Object.keys(subject).length > 0 ? subject : undefined;
}
