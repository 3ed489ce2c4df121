import type { DrainState } from '../drain-state.ts';
import type { Config } from '../../config/config.ts';
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../logging/logger.ts';
import type { LogByPosition } from '../../event-store/event-store.ts';
import type { ReadModelReader } from '../../read-models/read-model-reader.ts';
import type { SessionTokens } from '../session-tokens.ts';
import type { AdminDeps } from '../admin/admin-context.ts';
import type { ReadModelVersions } from '../../projection-engine/read-model-versions.ts';
import { publicContentQueries, type PublicContentQueries } from '../../../projections/public-content-queries.ts';
import { FormSetLookup } from './entry-lookup.ts';

/** What the public content routes need. */
export interface PublicContentDeps {
  reader: ReadModelReader;
  /** The log, where a draft preview reads its revision's snapshot. */
  log: LogByPosition;
  /** The public-content read model's queries, built once for every route of the group. */
  publicContent: PublicContentQueries;
  sessions: SessionTokens;
  clock: Clock;
  sitemapUrlsPerFile: number;
  /** Versions of the read models, which key the caches of form set lookups. */
  versions: ReadModelVersions;
  formSets: FormSetLookup;
  logger: Logger;
  /** The process's shutdown: event streams (GET /sync/events) end when it begins. */
  drain?: DrainState;
  /** Event streams of the sync feed: how many at once per client address and in all, and how often a quiet one gets a heartbeat. */
  syncStreams: { perClient: number; max: number; heartbeatMs: number };
}

export function publicContentDeps(config: Config, admin: Pick<AdminDeps, 'reader' | 'log' | 'sessions' | 'clock' | 'logger'>, versions: ReadModelVersions, drain?: DrainState): PublicContentDeps {
  const publicContent = publicContentQueries(admin.reader);
  return {
    reader: admin.reader,
    log: admin.log,
    publicContent,
    sessions: admin.sessions,
    clock: admin.clock,
    sitemapUrlsPerFile: config.sitemapUrlsPerFile,
    versions,
    formSets: new FormSetLookup(publicContent, versions),
    logger: admin.logger,
    ...(drain ? { drain } : {}),
    syncStreams: config.syncStreams,
  };
}

