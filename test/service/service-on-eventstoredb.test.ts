/**
 * The service as `npm start` runs it, with its event log on EventStoreDB and its read models on the embedded
 * SQLite: the server is the one EVENTSTORE_CONNECTION_STRING names, a container, or the gRPC stand-in
 * (test/support/esdb-server.ts; the title names which). The operator CLI bootstraps through the same server,
 * the admin API writes, the projectors fold what they read back through the client's subscriptions, and the
 * public API serves it.
 */
import path from 'node:path';
import { expect } from 'chai';
import { EventStoreDbEventStore } from '../../src/event-store/esdb-event-store.ts';
import { runEntry, startServiceProcess, type StartedService } from '../support/child-process.ts';
import { describeEsdbTarget, resolveEsdbTarget, startEsdbServer, type StartedEsdbServer } from '../support/esdb-server.ts';
import { tempDir } from '../support/temp-dir.ts';
import { articleFormSet } from '../admin/support.ts';
import { eventually } from '../support/eventually.ts';

const PASSWORD = 'correct horse battery staple';
const target = await resolveEsdbTarget();

/** Runs `attempt` until `done` accepts its result, failing after a bound (the kit's eventually). */
const until = <T>(attempt: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 15_000) => eventually(attempt, done, timeoutMs, what, 50);

describe(`service on EventStoreDB (${describeEsdbTarget(target)}) with SQLite read models, as npm start runs it`, function () {
  this.timeout(180_000);
  let server: StartedEsdbServer;
  let service: StartedService | undefined;
  before(async () => {
    server = await startEsdbServer(target);
  });
  after(async () => {
    await service?.stop('SIGKILL');
    await server?.stop();
  });

  it('bootstraps, writes and publishes through the admin API, serves the public API, and rides out a server restart', async function () {
    if (target.kind === 'existing') {
      const probe = EventStoreDbEventStore.connect(server.connectionString);
      const head = await probe.headPosition().finally(() => probe.close());
      if (head !== null) this.skip(); // bootstrapping needs an empty server: this one holds events
    }
    const dataDir = path.join(tempDir(), 'data');
    const secrets = { SESSION_SECRET: 'a-session-secret-of-at-least-32-characters', SECRETS_KEY: Buffer.alloc(32, 5).toString('base64') };
    const env = { DATA_DIR: dataDir, EVENTSTORE_CONNECTION_STRING: server.connectionString, ...secrets };

    const boot = await runEntry('src/cli/main.ts', ['bootstrap', '--project', 'On KurrentDB', '--plan', 'standard', '--admin-email', 'admin@example.com', '--admin-password', PASSWORD], env);
    expect(boot.code, boot.stderr).to.equal(0);
    const { projectId, publicApiKey, agentKey } = JSON.parse(boot.stdout) as { projectId: string; publicApiKey: string; agentKey: string };

    service = await startServiceProcess(env);
    const base = service.url;
    const ready = await until(() => fetch(`${base}/readyz`), (r) => r.status === 200, 'ready');
    const readiness = (await ready.json()) as { checks: Record<string, { ok: boolean }> };
    expect(readiness.checks['event-store']?.ok).to.equal(true);

    const login = await fetch(`${base}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@example.com', password: PASSWORD }) });
    expect(login.status).to.equal(200);
    const { token } = (await login.json()) as { token: string };
    /** An admin call; a create with an idempotency key is retried while the API answers 503 retryable, as a client would. */
    const call = async (method: string, route: string, body?: unknown, idempotencyKey?: string): Promise<{ status: number; body: any }> => {
      for (let attempt = 0; ; attempt++) {
        const response = await fetch(`${base}/admin/v1${route}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            'x-project-id': projectId,
            ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await response.text();
        const answer = { status: response.status, body: text ? JSON.parse(text) : null };
        if (answer.status !== 503 || idempotencyKey === undefined || attempt >= 20) return answer;
        expect(answer.body.error.retryable).to.equal(true);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const publicList = () =>
      fetch(`${base}/public/v1/form-sets/articles/entries?locale=en`, { headers: { 'X-Service-Public-Api-Key': publicApiKey } }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

    const formSet = await call('POST', '/form-sets', articleFormSet);
    expect(formSet.status, JSON.stringify(formSet.body)).to.equal(201);
    const publish = async (slug: string) => {
      const created = await call('POST', `/form-sets/${formSet.body.id}/entries`, { slug, fields: { title: { en: `Title of ${slug}` } } }, `create-${slug}`);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect((await call('POST', `/revisions/${created.body.revision.id}/submit`, {})).status).to.equal(200);
      const published = await call('POST', `/revisions/${created.body.revision.id}/publish`, {});
      expect(published.status, JSON.stringify(published.body)).to.equal(200);
    };
    await publish('first');
    const first = await until(publicList, (r) => r.status === 200 && r.body.items.length === 1, 'the first entry on the public API');
    expect(first.body.items[0].entry.slug).to.equal('first');

    if (server.standIn) {
      // KurrentDB restarts under the running service: the write that meets the cut connection is refused as
      // retryable (503) and retried by the client; the projectors resubscribe on their own.
      await server.standIn.restart();
    }
    await publish('second');
    const both = await until(publicList, (r) => r.status === 200 && r.body.items.length === 2, 'both entries on the public API');
    expect(both.body.items.map((i: any) => i.entry.slug).sort()).to.deep.equal(['first', 'second']);

    // What reached the server: the content events, with the correlation ids under the server's own names, and
    // no secret in clear.
    if (server.standIn) {
      const records = server.standIn.log.records.filter((r) => !r.type.startsWith('$'));
      expect(records.filter((r) => r.type === 'entry.revision-published')).to.have.length(2);
      expect(records.filter((r) => r.type === 'entry.created')).to.have.length(2); // each create once, retried or not
      for (const record of records) {
        const metadata = JSON.parse(Buffer.from(record.metadata).toString()) as Record<string, unknown>;
        expect(metadata, record.type).to.have.property('$correlationId');
        const text = Buffer.from(record.data).toString() + Buffer.from(record.metadata).toString();
        for (const secret of [PASSWORD, agentKey, publicApiKey, secrets.SESSION_SECRET]) expect(text, record.type).to.not.include(secret);
      }
    }

    const stopped = await service.stop('SIGTERM');
    service = undefined;
    expect(stopped.code).to.equal(0);
  });
});
