/**
 * The admin API's collaborators (AdminDeps): the reader, the application services, sessions, rate limits and
 * the recorders the admin routes use, built once per process by the api role (api-role.ts).
 */
import type { UserState } from '../domain/access/user-decider.ts';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { ProjectionSupervisor } from '../projection-engine/projection-supervisor.ts';
import type { Stores } from './open-stores.ts';
import { resolveSessionSecret } from '../security/session-secret.ts';
import type { AdminDeps } from '../http/admin/admin-context.ts';
import { ReadModelReader } from '../read-models/read-model-reader.ts';
import { ContentService } from '../application/content-service.ts';
import { AccessService } from '../application/access-service.ts';
import { Reservations } from '../application/reservations.ts';
import { Idempotency } from '../application/idempotency.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import { SessionTokens } from '../http/session-tokens.ts';
import { RateLimiter } from '../security/rate-limiter.ts';
import { LoginThrottle } from '../security/login-throttle.ts';
import { WorkSlots } from '../security/work-slots.ts';
import { KeyUsageRecorder } from '../application/key-usage.ts';
import { RefusalRecorder } from '../application/refusal-recorder.ts';
import { IssuedKeyReplay } from '../application/issued-key-replay.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import type { AggregateSnapshots } from '../application/aggregate-snapshots.ts';
import type { EntryState } from '../domain/content/entry/entry-decider.ts';
import type { WorkingCopyStore } from '../working-copies/working-copy-store.ts';
import { WorkingCopies } from '../application/working-copies.ts';


/** The admin API's collaborators, built once per process. */
export function adminDeps(
  config: Config,
  d: { log: EventLog; stores: Stores; supervisor: ProjectionSupervisor | undefined; watermark: ProjectionWatermark; clock: Clock; logger: Logger; entrySnapshots: AggregateSnapshots<EntryState>; userSnapshots?: AggregateSnapshots<UserState>; keyStore: KeyStore; workingCopies: WorkingCopyStore },
): AdminDeps {
  // Reads agree with read-your-writes waits: the supervisor names the generation (see ReadModelReader).
  const reader = new ReadModelReader(d.stores.readModels, { generations: d.supervisor });
  const watermark = d.watermark;
  const content = new ContentService({
    log: d.log,
    reader,
    reservations: new Reservations(d.log),
    idempotency: new Idempotency(d.log, { clock: d.clock }),
    watermark,
    clock: d.clock,
    entrySnapshots: d.entrySnapshots,
    workingCopies: d.workingCopies,
  });
  return {
    reader,
    content,
    workingCopies: new WorkingCopies({ store: d.workingCopies, content, clock: d.clock }),
    access: new AccessService({ log: d.log, clock: d.clock, ...(d.userSnapshots ? { userSnapshots: d.userSnapshots } : {}) }),
    log: d.log,
    watermark,
    sessions: new SessionTokens({ secret: resolveSessionSecret(config), clock: d.clock, sessionTtlSeconds: config.sessions.ttlSeconds }),
    rateLimiter: new RateLimiter({ clock: d.clock }),
    loginThrottle: new LoginThrottle({ clock: d.clock }),
    passwordChecks: new WorkSlots({ concurrency: config.sessions.passwordHashConcurrency, maxQueued: 64 }),
    clock: d.clock,
    logger: d.logger,
    issuedKeys: new IssuedKeyReplay({ keyStore: d.keyStore, clock: d.clock }),
    keyUsage: new KeyUsageRecorder({ log: d.log, clock: d.clock, logger: d.logger }),
    refusals: new RefusalRecorder({ log: d.log, clock: d.clock, logger: d.logger }),
  };
}

