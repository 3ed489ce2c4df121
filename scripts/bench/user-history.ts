/**
 * bench:user-history: what a console user's own history costs them. Every sign-in appends user.signed-in to the
 * user's stream, so a person who signs in daily for years has thousands of events; the commands on their account
 * (recording a sign-in, signing out) must not cost more for it.
 *
 * A service starts in this process on the embedded default; one user per size is given that many sign-ins in
 * history (appended in batches, as the log would hold them). Rounds interleave the sizes; each round measures,
 * per size, POST /auth/login (a password check, then the sign-in recorded on the user's stream) and POST
 * /auth/logout (the session revoked on it), each with its p50 and its ratio to the smallest size's in the same
 * round; the aggregate cache is off (AGGREGATE_CACHE_MB=0) unless --cached, so the work itself is measured.
 * Medians over the rounds, and the spread of the ratios.
 *
 *   npm run bench:user-history -- [--sizes 10,1000,10000] [--samples 20] [--rounds 5] [--cached] [--json]
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import { systemClock } from '../../src/clock.ts';
import { startService } from '../../src/service/service.ts';
import { AccessService } from '../../src/application/access-service.ts';
import { userStream } from '../../src/domain/access/access-streams.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { median } from './support/percentile.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const sizes = option('sizes', '10,1000,10000').split(',').map(Number);
const samples = Number(option('samples', '20'));
const rounds = Number(option('rounds', '5'));
const cached = args.includes('--cached');
const json = args.includes('--json');
if (sizes.some((s) => !Number.isInteger(s) || s < 1) || !(samples >= 1) || !(rounds >= 1)) {
  process.stderr.write('usage: npm run bench:user-history -- [--sizes 10,1000,10000] [--samples 20] [--rounds 5] [--cached] [--json]\n');
  process.exit(2);
}

const PASSWORD = 'bench password 123';
const OPERATOR = { kind: 'operator' as const, operatorId: 'bench' };
const ms = (ns: bigint) => Number(ns) / 1e6;

const dataDir = path.join(tempDir(), 'data');
const service = await startService(loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', LOAD_SHED_LAG_MS: '0', AGGREGATE_CACHE_MB: cached ? '64' : '0' }), { logger: pino({ level: 'silent' }), clock: systemClock });
const access = new AccessService({ log: service.log, clock: systemClock });
const project = await access.bootstrap(OPERATOR, { projectName: 'Bench', plan: 'business', adminEmail: 'bench-admin@example.com', adminPassword: PASSWORD, contentLocales: { locales: ['en'], defaultLocale: 'en' } });
await service.supervisor!.waitFor(project.position, 10_000);

/** A user with `size` sign-ins in their history. */
async function userWith(size: number): Promise<{ userId: string; email: string }> {
  const email = `user-${size}@example.com`;
  const created = await access.createUser(OPERATOR, { tenantId: project.tenantId, email, password: PASSWORD, role: 'tenant_user' });
  let revision = 0n;
  for (let done = 0; done < size; ) {
    const batch = Math.min(500, size - done);
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const events = Array.from({ length: batch }, () => ({ type: 'user.signed-in', data: { userId: created.userId, sessionId: randomUUID(), method: 'password', expiresAt } }));
    await service.log.append(userStream(created.userId), events, revision, { actor: { type: 'user', id: created.userId } });
    revision += BigInt(batch);
    done += batch;
  }
  await service.supervisor!.waitFor(await service.log.headPosition() ?? 0n, 60_000);
  return { userId: created.userId, email };
}

const users = new Map<number, { userId: string; email: string }>();
for (const size of sizes) {
  process.stderr.write(`bench:user-history: a user with ${size} sign-ins\n`);
  users.set(size, await userWith(size));
}

async function timed(run: () => Promise<Response>, status: number): Promise<number> {
  const started = process.hrtime.bigint();
  const answer = await run();
  const elapsed = ms(process.hrtime.bigint() - started);
  if (answer.status !== status) throw new Error(`${answer.url}: ${answer.status} ${await answer.text()}`);
  await answer.arrayBuffer().catch(() => undefined);
  return elapsed;
}

interface Round {
  login: Map<number, number>;
  logout: Map<number, number>;
}
const results: Round[] = [];
for (let round = 1; round <= rounds; round++) {
  const login = new Map<number, number>();
  const logout = new Map<number, number>();
  for (const size of sizes) {
    const { email } = users.get(size)!;
    const ins: number[] = [];
    const outs: number[] = [];
    for (let i = 0; i < samples; i++) {
      let token = '';
      ins.push(await timed(async () => {
        const answer = await fetch(`${service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) });
        token = ((await answer.clone().json()) as { token: string }).token;
        return answer;
      }, 200));
      outs.push(await timed(() => fetch(`${service.url}/admin/v1/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } }), 204));
    }
    login.set(size, median(ins));
    logout.set(size, median(outs));
  }
  results.push({ login, logout });
  const ratio = (m: Map<number, number>, size: number) => (m.get(size)! / m.get(sizes[0]!)!).toFixed(2);
  process.stderr.write(`round ${round}: ${sizes.map((size) => `${size}: login ${login.get(size)!.toFixed(2)} ms (${ratio(login, size)}×), logout ${logout.get(size)!.toFixed(2)} ms (${ratio(logout, size)}×)`).join(' | ')}\n`);
}
await service.stop();

const summary = sizes.map((size) => {
  const loginRatios = results.map((r) => r.login.get(size)! / r.login.get(sizes[0]!)!);
  const logoutRatios = results.map((r) => r.logout.get(size)! / r.logout.get(sizes[0]!)!);
  return {
    signIns: size,
    loginP50Ms: median(results.map((r) => r.login.get(size)!)),
    loginRatio: median(loginRatios),
    logoutP50Ms: median(results.map((r) => r.logout.get(size)!)),
    logoutRatio: median(logoutRatios),
    logoutRatioSpread: [Math.min(...logoutRatios), Math.max(...logoutRatios)],
  };
});
if (json) process.stdout.write(`${JSON.stringify({ cached, samples, rounds, sizes: summary })}\n`);
else {
  process.stdout.write(`sign-ins in history | sign in p50 (÷ ${sizes[0]}) | sign out p50 (÷ ${sizes[0]}, spread)\n`);
  for (const s of summary) process.stdout.write(`${s.signIns} | ${s.loginP50Ms.toFixed(2)} ms (${s.loginRatio.toFixed(2)}×) | ${s.logoutP50Ms.toFixed(2)} ms (${s.logoutRatio.toFixed(2)}×, ${s.logoutRatioSpread.map((v) => v.toFixed(2)).join('-')})\n`);
}
