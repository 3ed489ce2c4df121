import path from 'node:path';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { stringify as stableJson } from 'safe-stable-stringify';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { SecretBox } from '../../src/security/secret-box.ts';
import { KEY_REPLAY_WINDOW_MS, replayKeyId } from '../../src/application/issued-key-replay.ts';
import { tempDir } from '../support/temp-dir.ts';
import { adminSession, startAdminFixture, type AdminFixture } from './support.ts';
import { eventually } from '../support/eventually.ts';

const SECRETS_KEY = randomBytes(32);
const HOUR = 60 * 60 * 1000;

/**
 * A key issued with an idempotency key is kept for its replays sealed under a data key of its own in the key
 * store, never under SECRETS_KEY: a resent request inside the 24-hour window gets the same key; after it, or
 * once the key is revoked, the data key is destroyed and the replay is a 409, so that no copy of the log, with
 * or without SECRETS_KEY, ever shows the key again.
 */
describe('admin API: keys issued with an idempotency key are crypto-shredded after their replay window', function () {
  this.timeout(120_000);
  let clock: ManualClock;
  let f: AdminFixture;
  /** The tenant admin's console session (keys are issued and revoked by a tenant admin, never by an agent key). */
  let session: { token: string; headers: Record<string, string> };
  /** Signs in again (after the clock moved past the session's lifetime, or on another process). */
  const signIn = async (project = f.project) => {
    session = await adminSession({ ...f, project });
  };

  const issue = (body: unknown, key: string) => f.call('POST', '/keys', { body, token: session.token, headers: { ...session.headers, 'idempotency-key': key } });
  const holds = (keyId: string) => f.service.keyStore.get(replayKeyId(keyId)).then((k) => k !== null);
  const expectGone = (answer: { status: number; body: any }) => {
    expect(answer.status, JSON.stringify(answer.body)).to.equal(409);
    expect(answer.body.error).to.include({ code: 'CONFLICT', retryable: false });
    expect(answer.body.error.message).to.match(/shown when it was issued; its replay window has passed/);
    expect(answer.body.error.hint).to.match(/revoke it .* and issue another/);
  };

  beforeEach(async () => {
    clock = new ManualClock('2026-12-01T09:00:00.000Z');
    f = await startAdminFixture({ clock, env: { SECRETS_KEY: SECRETS_KEY.toString('base64') } });
    await signIn();
  });
  afterEach(() => f?.stop());

  it('answers a resent key with the same key inside the window; after it the job destroys the data key and the replay is 409', async () => {
    const first = await issue({ type: 'agent', name: 'Deploy bot' }, 'replay-1');
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    const publicKey = await issue({ type: 'public' }, 'replay-public-1');
    expect(publicKey.status).to.equal(201);
    // One issued without an idempotency key keeps nothing for a replay.
    const plain = await f.call('POST', '/keys', { body: { type: 'agent', name: 'Plain' }, token: session.token, headers: session.headers });
    expect(plain.status).to.equal(201);
    expect(await holds(plain.body.id)).to.equal(false);

    clock.advance(KEY_REPLAY_WINDOW_MS - 60_000);
    await signIn();
    const again = await issue({ type: 'agent', name: 'Deploy bot' }, 'replay-1');
    expect([again.status, again.body]).to.deep.equal([201, first.body]);
    expect((await issue({ type: 'public' }, 'replay-public-1')).body.key).to.equal(publicKey.body.key);
    // Inside the window the job leaves the data keys alone.
    expect(await f.service.replayKeyShredder!.runOnce()).to.equal(0);
    expect(await holds(first.body.id)).to.equal(true);

    clock.advance(60_000);
    // Past the window the replay is refused even before the job has run.
    expectGone(await issue({ type: 'agent', name: 'Deploy bot' }, 'replay-1'));
    expect(await f.service.replayKeyShredder!.runOnce()).to.equal(2);
    expect(await holds(first.body.id)).to.equal(false);
    expect(await f.service.keyStore.destroyed(replayKeyId(first.body.id))).to.equal(true);
    expect(await holds(publicKey.body.id)).to.equal(false);
    expectGone(await issue({ type: 'agent', name: 'Deploy bot' }, 'replay-1'));
    expectGone(await issue({ type: 'public' }, 'replay-public-1'));
    // Idempotent: a second run finds nothing left to destroy. The key itself still works (only its replay ended).
    expect(await f.service.replayKeyShredder!.runOnce()).to.equal(0);
    expect((await f.call('GET', '/form-sets', { token: first.body.key })).status).to.equal(200);
  });

  it('keeps the issued keys out of the log: nothing in it, data or metadata, is the key or opens with SECRETS_KEY', async () => {
    const agent = await issue({ type: 'agent', name: 'Scanned' }, 'scan-agent');
    const pub = await issue({ type: 'public' }, 'scan-public');
    expect([agent.status, pub.status]).to.deep.equal([201, 201]);
    const issued = [agent.body, pub.body] as Array<{ id: string; key: string }>;

    const events = await collect(f.service.log.readAll({ after: 'start' }));
    const texts = events.map((e) => JSON.stringify({ ...e, revision: String(e.revision), position: String(e.position) }));
    for (const text of texts) for (const { key } of issued) expect(text.includes(key), `${key.slice(0, 12)}… in ${text.slice(0, 80)}`).to.equal(false);

    // What the log holds instead: each key sealed, with the end of its window; it opens with its data key only.
    const secrets = new SecretBox(SECRETS_KEY);
    for (const { id, key } of issued) {
      const completed = events.find((e) => e.type === 'idempotency.completed' && (e.data as { body: { keyId?: string } }).body.keyId === id);
      const record = (completed!.data as { body: { sealedKey: string; replayUntil: string } }).body;
      expect(record.replayUntil).to.equal('2026-12-02T09:00:00.000Z');
      expect(() => secrets.open(record.sealedKey, replayKeyId(id))).to.throw();
      const dataKey = await f.service.keyStore.get(replayKeyId(id));
      expect(new SecretBox(dataKey!).open(record.sealedKey, replayKeyId(id))).to.equal(key);
    }
    // No sealed value anywhere in the log opens with SECRETS_KEY under any issued key's context.
    const sealedValues = texts.flatMap((text) => text.match(/v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g) ?? []);
    expect(sealedValues.length).to.be.greaterThanOrEqual(2);
    for (const sealed of sealedValues) {
      for (const { id } of issued) expect(() => secrets.open(sealed, replayKeyId(id)), sealed.slice(0, 20)).to.throw();
    }
  });

  it('destroys the data key at once when the key is revoked: the replay is 409 from then on', async () => {
    const first = await issue({ type: 'agent', name: 'Short-lived' }, 'revoke-1');
    expect(first.status).to.equal(201);
    expect(await holds(first.body.id)).to.equal(true);
    const revoked = await f.call('DELETE', `/keys/${first.body.id}`, { token: session.token, headers: session.headers });
    expect(revoked.status, JSON.stringify(revoked.body)).to.equal(200);
    expect(await holds(first.body.id)).to.equal(false);
    expect(await f.service.keyStore.destroyed(replayKeyId(first.body.id))).to.equal(true);
    expectGone(await issue({ type: 'agent', name: 'Short-lived' }, 'revoke-1'));
    // Revoking again changes nothing and answers as before.
    expect((await f.call('DELETE', `/keys/${first.body.id}`, { token: session.token, headers: session.headers })).status).to.equal(200);
  });

  it('answers 409, not 500, to a resent key whose record an earlier release sealed under SECRETS_KEY', async () => {
    // The record as the earlier release wrote it: the key sealed with SECRETS_KEY, no replayUntil.
    const request = { type: 'agent', name: 'Old' };
    const keyId = randomUUID();
    const streamId = `idempotency-${createHash('sha256').update(`${f.project.projectId}\u0000issue_key\u0000legacy-1`).digest('hex')}`;
    const requestHash = createHash('sha256').update(stableJson(request)!).digest('hex');
    const sealedKey = new SecretBox(SECRETS_KEY).seal('sk-agent-legacy', replayKeyId(keyId));
    const context = { actor: { type: 'user' as const, id: randomUUID() }, idempotencyKey: 'legacy-1' };
    await f.service.log.append(streamId, [{ type: 'idempotency.started', data: { scope: f.project.projectId, operation: 'issue_key', requestHash, reservedIds: { keyId } } }], 'no_stream', context);
    await f.service.log.append(streamId, [{ type: 'idempotency.completed', data: { status: 201, body: { keyId, prefix: 'sk-agent-leg', createdAt: clock.now().toISOString(), sealedKey } } }], 0n, context);
    expectGone(await issue(request, 'legacy-1'));
  });

  it('keeps the window across a restart: the same key inside it, 409 after it, the data key destroyed by the new process', async () => {
    const dataDir = path.join(tempDir(), 'data');
    await f.stop();
    f = await startAdminFixture({ clock, dataDir, env: { SECRETS_KEY: SECRETS_KEY.toString('base64') } });
    const project = f.project;
    await signIn();
    const first = await issue({ type: 'agent', name: 'Survivor' }, 'restart-1');
    expect(first.status).to.equal(201);
    await f.stop();

    clock.advance(12 * HOUR);
    f = await startAdminFixture({ clock, dataDir, env: { SECRETS_KEY: SECRETS_KEY.toString('base64') } });
    await signIn(project);
    const again = await issue({ type: 'agent', name: 'Survivor' }, 'restart-1');
    expect([again.status, again.body]).to.deep.equal([201, first.body]);
    await f.stop();

    clock.advance(12 * HOUR);
    f = await startAdminFixture({ clock, dataDir, env: { SECRETS_KEY: SECRETS_KEY.toString('base64') } });
    // The job of this process ran once at its start: the window of the key issued two processes ago had ended.
    await waitFor(async () => !(await holds(first.body.id)));
    expect(await f.service.keyStore.destroyed(replayKeyId(first.body.id))).to.equal(true);
    await signIn(project);
    expectGone(await issue({ type: 'agent', name: 'Survivor' }, 'restart-1'));
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  await eventually(condition, Boolean, timeoutMs, 'condition', 25);
}
