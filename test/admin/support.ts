import type { Logger } from '../../src/logging/logger.ts';
import path from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import { systemClock, type Clock } from '../../src/clock.ts';
import { startService, type RunningService, type ServiceDeps } from '../../src/service/service.ts';
import { compiledModule } from '../support/compiled-build.ts';
import { AccessService, type BootstrapResult } from '../../src/application/access-service.ts';
import { tempDir } from '../support/temp-dir.ts';

export const OPERATOR = { kind: 'operator' as const, operatorId: 'test' };

/** The password of the fixture's tenant admin. */
export const PASSWORD = 'correct horse battery staple';

/** A service started in this process on a free port, with one bootstrapped project. */
export interface AdminFixture {
  service: RunningService;
  access: AccessService;
  project: BootstrapResult;
  /** Fetch against /admin/v1 with a bearer token (the project's agent key unless given). */
  call(method: string, route: string, options?: { body?: unknown; token?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  stop(): Promise<void>;
}

/**
 * The configuration of a service under test on `dataDir`: an ephemeral port on loopback, silent. The service
 * shares this process's event loop with the test driving it, so load shedding on event-loop lag would judge
 * the test's own pace; it is off unless a test sets LOAD_SHED_LAG_MS (test/http/load-shedding.test.ts).
 */
function serviceConfigForTest(dataDir: string, env: Record<string, string> = {}) {
  return loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', LOAD_SHED_LAG_MS: '0', ...env });
}

/**
 * What a service started in the test's process needs besides its configuration: its log tree thread runs the
 * compiled follower (a thread loading it through tsx costs ~0.5 s of CPU per service start).
 */
export function serviceDepsForTest(deps: { logger?: Logger; clock?: Clock } = {}): ServiceDeps {
  return { logger: deps.logger ?? pino({ level: 'silent' }), clock: deps.clock ?? systemClock, logTreeFollowerModule: compiledModule('src/audit/log-tree-thread-worker.ts') };
}

/** An API-only process (ROLES=api) on a fixture's data folder: a replica beside the fixture's service, which runs the projectors. */
export function startApiReplica(dataDir: string, env: Record<string, string> = {}): Promise<RunningService> {
  return startService(serviceConfigForTest(dataDir, { ...env, ROLES: 'api' }), serviceDepsForTest());
}

export async function startAdminFixture(options: { plan?: string; env?: Record<string, string>; dataDir?: string; clock?: Clock; logger?: Logger } = {}): Promise<AdminFixture> {
  const dataDir = options.dataDir ?? path.join(tempDir(), 'data');
  const config = serviceConfigForTest(dataDir, options.env);
  const service = await startService(config, serviceDepsForTest({ ...(options.logger ? { logger: options.logger } : {}), ...(options.clock ? { clock: options.clock } : {}) }));
  // With published checkpoints, writes wait for the start-up check against them (seconds; /readyz says so).
  await service.logTree?.integrity;
  const access = new AccessService({ log: service.log, clock: systemClock });
  const project = await access.bootstrap(OPERATOR, {
    projectName: `Project ${Math.random().toString(36).slice(2, 8)}`,
    plan: options.plan ?? 'business',
    adminEmail: `admin-${Math.random().toString(36).slice(2, 8)}@example.com`,
    adminPassword: PASSWORD,
    contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' },
  });
  await service.supervisor!.waitFor(project.position, 5000);
  return {
    service,
    access,
    project,
    async call(method, route, { body, token, headers } = {}) {
      const response = await fetch(`${service.url}/admin/v1${route}`, {
        method,
        headers: { authorization: `Bearer ${token ?? project.agentKey.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
    },
    stop: () => service.stop(),
  };
}

/** Creates the articles form set (below) in the fixture's project; returns its id. */
export async function createArticleFormSet(f: AdminFixture): Promise<string> {
  const created = await f.call('POST', '/form-sets', { body: articleFormSet });
  if (created.status !== 201) throw new Error(`creating the articles form set: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.id as string;
}

/** A small form set definition exercising localized and plain fields. */
export const articleFormSet = {
  slug: 'articles',
  name: 'Articles',
  description: 'News and features',
  fields: [
    { key: 'title', type: 'text', label: 'Title', required: true, limits: { maxLength: 120 } },
    { key: 'body', type: 'textarea', label: 'Body', required: false },
    { key: 'rating', type: 'number', label: 'Rating', required: false, limits: { min: 0, max: 5 } },
  ],
};

/** A console session of the fixture's tenant admin, acting in its project. */
export async function adminSession(f: AdminFixture): Promise<{ token: string; headers: Record<string, string> }> {
  const response = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: f.project.adminEmail, password: PASSWORD }) });
  expect(response.status).to.equal(200);
  const { token } = (await response.json()) as { token: string };
  return { token, headers: { 'X-Project-Id': f.project.projectId } };
}
