import path from 'node:path';
import { expect } from 'chai';
import { runEntry, startServiceProcess, type StartedService } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { articleFormSet } from '../admin/support.ts';
import { PASSWORD, Receiver, until } from './support.ts';

/**
 * Crash safety (issue 7, item 6) with the service as `npm start` runs it, killed with SIGKILL while the
 * receiver holds a delivery's request open: after a restart, the interrupted delivery is sent again (the
 * receiver gets it twice, with the same bytes, and the history shows both attempts), the delivery that
 * was still waiting in the outbox is sent once, and the deliveries recorded as sent are not sent again.
 */
describe('webhooks: kill -9 mid-dispatch and restart', function () {
  this.timeout(120_000);
  let receiver: Receiver;
  let service: StartedService | undefined;
  const dataDir = path.join(tempDir(), 'data');

  before(async () => {
    receiver = await Receiver.start();
  });
  after(async () => {
    await service?.stop('SIGKILL');
    await receiver?.close();
  });

  it('loses no delivery, sends the interrupted one again with the same bytes, and never resends a recorded one', async () => {
    const boot = await runEntry('src/cli/main.ts', ['bootstrap', '--project', 'Crash', '--plan', 'standard', '--admin-email', 'admin@example.com', '--admin-password', PASSWORD], { DATA_DIR: dataDir });
    expect(boot.code, boot.stderr).to.equal(0);
    const { projectId } = JSON.parse(boot.stdout) as { projectId: string };
    const env = {
      DATA_DIR: dataDir,
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      WEBHOOK_CA_FILE: receiver.caFile,
      // One request at a time per webhook: the second delivery to the hanging receiver waits in the outbox.
      WEBHOOK_CONCURRENCY_PER_WEBHOOK: '1',
    };
    service = await startServiceProcess(env);
    let base = service.url;
    const login = async () => {
      const response = await fetch(`${base}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@example.com', password: PASSWORD }) });
      expect(response.status).to.equal(200);
      return ((await response.json()) as { token: string }).token;
    };
    let token = await login();
    const call = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${base}/admin/v1${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'x-project-id': projectId, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    };

    receiver.behaviours.set('/held', 'hang');
    const held = await call('POST', '/webhooks', { name: 'Held', url: receiver.url('/held'), events: ['entry.published'] });
    const quick = await call('POST', '/webhooks', { name: 'Quick', url: receiver.url('/quick'), events: ['entry.published'] });
    expect(held.status, JSON.stringify(held.body)).to.equal(201);
    receiver.secrets.set('/held', held.body.secret);
    receiver.secrets.set('/quick', quick.body.secret);
    const formSet = await call('POST', '/form-sets', articleFormSet);
    const publishEntry = async (slug: string) => {
      const created = await call('POST', `/form-sets/${formSet.body.id}/entries`, { slug, fields: { title: { en: slug } } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect((await call('POST', `/revisions/${created.body.revision.id}/submit`, {})).status).to.equal(200);
      expect((await call('POST', `/revisions/${created.body.revision.id}/publish`, {})).status).to.equal(200);
    };

    await publishEntry('first');
    await receiver.waitFor('/held', (r) => r.length === 1);
    await receiver.waitFor('/quick', (r) => r.length === 1);
    await publishEntry('second');
    await receiver.waitFor('/quick', (r) => r.length === 2);
    // Both deliveries to Quick are recorded as sent before the kill.
    await until(() => call('GET', `/webhooks/${quick.body.id}/deliveries`), (r) => r.body.items.length === 2 && r.body.items.every((d: any) => d.status === 'succeeded'));
    const heldBefore = await call('GET', `/webhooks/${held.body.id}/deliveries`);
    expect(heldBefore.body.items.map((d: any) => [d.status, d.attemptCount])).to.deep.equal([
      ['pending', 0],
      ['in_progress', 1],
    ]);
    const logsBefore = service.logs();

    const killed = await service.stop('SIGKILL');
    expect(killed.signal).to.equal('SIGKILL');
    service = undefined;
    receiver.behaviours.set('/held', { status: 200, body: 'ok' });

    service = await startServiceProcess(env);
    base = service.url;
    token = await login();
    const got = await receiver.waitFor('/held', (r) => r.length === 3);
    const [interrupted, again, waiting] = got;
    expect(interrupted!.json.entry_slug).to.equal('first');
    expect(again!.raw.equals(interrupted!.raw)).to.equal(true);
    expect(again!.headers['x-service-delivery']).to.equal(interrupted!.headers['x-service-delivery']);
    expect(waiting!.json.entry_slug).to.equal('second');
    for (const r of got) expect(r.verified).to.equal(true);

    const history = await until(
      () => call('GET', `/webhooks/${held.body.id}/deliveries`),
      (r) => r.body.items.length === 2 && r.body.items.every((d: any) => d.status === 'succeeded'),
    );
    const [second, first] = history.body.items;
    expect(first.attempts.map((a: any) => [a.number, a.state, a.httpStatus])).to.deep.equal([
      [1, 'interrupted', null],
      [2, 'succeeded', 200],
    ]);
    expect(first.attempts[0].error).to.match(/^interrupted: /);
    expect(first.attempts[1].payload).to.equal(first.attempts[0].payload);
    expect(second.attempts.map((a: any) => [a.number, a.state, a.httpStatus])).to.deep.equal([[1, 'succeeded', 200]]);

    // Nothing recorded as sent went out again: Quick got its two, once each. A resend would have come by the time
    // a delivery asked for after the restart has gone out to both.
    await publishEntry('third');
    await receiver.waitFor('/quick', (r) => r.some((x) => x.json?.entry_slug === 'third'));
    await receiver.waitFor('/held', (r) => r.some((x) => x.json?.entry_slug === 'third'));
    expect(receiver.received('/quick').map((x) => x.json?.entry_slug)).to.deep.equal(['first', 'second', 'third']);
    expect(receiver.received('/held').map((x) => x.json?.entry_slug)).to.deep.equal(['first', 'first', 'second', 'third']);

    // The signing secrets never reached the logs.
    const logs = JSON.stringify([...logsBefore, ...service.logs()]);
    expect(logs).to.not.include(held.body.secret);
    expect(logs).to.not.include(quick.body.secret);
  });
});
