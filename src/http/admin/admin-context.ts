import type { IssuedKeyReplay } from '../../application/issued-key-replay.ts';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Principal } from '../../domain/principal.ts';
import type { KeyUsageRecorder } from '../../application/key-usage.ts';
import type { RefusalRecorder } from '../../application/refusal-recorder.ts';
import type { ReadModelReader } from '../../read-models/read-model-reader.ts';
import type { ContentService, ProjectView } from '../../application/content-service.ts';
import type { WorkingCopies } from '../../application/working-copies.ts';
import type { AccessService } from '../../application/access-service.ts';
import type { EventLog } from '../../event-store/event-log.ts';
import type { ProjectionWatermark } from '../../application/projection-watermark.ts';
import type { SessionTokens } from '../session-tokens.ts';
import type { RateLimiter } from '../../security/rate-limiter.ts';
import type { LoginThrottle } from '../../security/login-throttle.ts';
import type { WorkSlots } from '../../security/work-slots.ts';
import { unauthorized, validationError } from '../errors/error-factory.ts';
import type { IpAllowlistEntry } from '../../domain/access/project-decider.ts';

/** What the admin routes need, assembled once by the service. */
export interface AdminDeps {
  reader: ReadModelReader;
  content: ContentService;
  /** People's unsaved typing in entries, kept on the server (the console's autosave). */
  workingCopies: WorkingCopies;
  access: AccessService;
  /** The event log, for services built by route groups (schema). */
  log: EventLog;
  /** Read your writes: waits until the read models have folded a position. */
  watermark: ProjectionWatermark;
  sessions: SessionTokens;
  rateLimiter: RateLimiter;
  /** Sign-in throttling (exponential backoff per address, account and both). */
  loginThrottle: LoginThrottle;
  /** Where sign-in password checks run: a few at once, so hashing never takes every core. */
  passwordChecks: WorkSlots;
  clock: Clock;
  logger: Logger;
  /** Records agent keys' use, for their "last used" time. */
  keyUsage?: KeyUsageRecorder;
  /** Keeps a key issued with an idempotency key for its replays, under a data key of its own that is destroyed when its window ends or it is revoked. */
  issuedKeys?: IssuedKeyReplay;
  /** Records refused writes in the audit trail, aggregated (src/application/refusal-recorder.ts). */
  refusals?: RefusalRecorder;
  /**
   * The access read model's version while this process folds it live itself (ProjectionSupervisor.foldsLive:
   * every change moves the version before a read can see it), else undefined. Authentication keeps what it read
   * of users, agent keys and projects by it; without it (an API-only process, a projector on standby) it reads
   * them for every request, so that a revocation counts from the moment it is folded.
   */
  accessVersion?: () => string | undefined;
}

/** The access read model's project document. */
export interface ProjectDoc extends ProjectView {
  name: string;
  slug: string;
  ipAllowlist: IpAllowlistEntry[];
}

export interface AdminState {
  principal: Principal;
  /** The console session the request came with (absent for agent keys). */
  session?: { sessionId: string; expiresAt: Date; /** Signed in with the console's session cookie (not a bearer token). */ cookie: boolean };
  /** The project the request acts in: an agent key's own, or a session's X-Project-Id. */
  project?: ProjectDoc;
}

/**
 * The authenticated caller. Fails closed: a request that reached a handler without passing authentication
 * (a routing mistake) is answered 401, never served without a principal.
 */
export function principalOf(ctx: Context): Principal {
  const principal = (ctx.state as Partial<AdminState>).principal;
  if (!principal) throw unauthorized('Missing credentials: send Authorization: Bearer <agent key or session token>.');
  return principal;
}

/** The request's project, or 400 naming the header a session must send. */
export function projectOf(ctx: Context): ProjectDoc {
  const project = (ctx.state as AdminState).project;
  if (!project) throw validationError('X-Project-Id: required with a session token on project routes.', { hint: 'Send the id of the project to act in.' });
  return project;
}

/** The project the session acts in (X-Project-Id), whose audit log shows the change; none without it. */
export function actingProject(ctx: Context): { projectId?: string } {
  const project = (ctx.state as AdminState).project;
  return project ? { projectId: project.projectId } : {};
}

/** The idempotency key of a create: the Idempotency-Key header or the body's idempotencyKey. */
export function idempotencyKeyOf(ctx: Context, body: { idempotencyKey?: unknown } | undefined): string | undefined {
  const header = ctx.get('Idempotency-Key');
  const fromBody = body?.idempotencyKey;
  if (fromBody !== undefined && typeof fromBody !== 'string') throw validationError('idempotencyKey: must be a string.');
  return header || fromBody || undefined;
}
