import path from 'node:path';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { serviceEventCatalog } from '../../src/service/event-catalog.ts';
import { handleCommand } from '../../src/application/command-handler.ts';
import { KeyIssuersCache } from '../../src/application/key-issuers.ts';
import { projectKeysStream } from '../../src/domain/access/access-streams.ts';
import { keyDecider, type KeyCommand } from '../../src/domain/access/key-decider.ts';
import { actorOf, type Caller } from '../../src/domain/access/caller.ts';
import { newApiKey } from '../../src/security/api-keys.ts';
import { tempDir } from '../support/temp-dir.ts';

const TENANT = '0b7e4c6a-6f3e-4d5c-9a51-3b1f9f5b2c01';
const PROJECT = '7d2a9c1e-2b44-4e8a-8f0a-6c1d2e3f4a01';
const key = (n: number) => `f0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Who issued each key, from the project's key stream: kept in memory and brought up to date with the events after it. */
describe('key issuers', () => {
  let store: SqliteEventStore;
  let log: EventLog;
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  beforeEach(() => {
    store = SqliteEventStore.open(path.join(tempDir(), 'events.sqlite'), { pollIntervalMs: 20 });
    log = new EventLog(store, serviceEventCatalog(), clock);
  });
  afterEach(async () => {
    await store.close();
  });

  const run = (caller: Caller, command: KeyCommand) =>
    handleCommand(log, projectKeysStream(PROJECT), keyDecider, command, { caller, project: { id: PROJECT, tenantId: TENANT, plan: 'enterprise' }, now: clock.now() }, { actor: actorOf(caller) });
  const issue = (caller: Caller, n: number) => {
    const material = newApiKey('agent');
    return run(caller, { type: 'issue-agent-key', keyId: key(n), scope: 'full', name: `key ${n}`, prefix: material.prefix, hash: material.hash });
  };
  const ALICE = 'a1111111-1111-4111-8111-111111111111';
  const alice: Caller = { kind: 'user', userId: ALICE, tenantId: TENANT, role: 'tenant_admin' };
  const operator: Caller = { kind: 'operator', operatorId: 'ops' };

  it('knows no key of a project without keys', async () => {
    expect([...(await new KeyIssuersCache().of(log, PROJECT))]).to.deep.equal([]);
  });

  it('sees keys issued after it folded the stream, and keeps a revoked key’s issuer', async () => {
    const cache = new KeyIssuersCache();
    await issue(operator, 1);
    expect([...(await cache.of(log, PROJECT))]).to.deep.equal([[key(1), { type: 'operator', id: 'ops' }]]);
    await issue(alice, 2);
    await run(alice, { type: 'revoke-agent-key', keyId: key(1) });
    expect([...(await cache.of(log, PROJECT))]).to.deep.equal([
      [key(1), { type: 'operator', id: 'ops' }],
      [key(2), { type: 'user', id: ALICE }],
    ]);
  });

  it('answers from what it kept while the stream has not moved, and folds again from the start when the log does not confirm it', async () => {
    const cache = new KeyIssuersCache();
    await issue(alice, 1);
    const first = await cache.of(log, PROJECT);
    expect(await cache.of(log, PROJECT)).to.equal(first);
    // Another log whose stream has other events at the same revisions: the kept fold is not confirmed.
    const otherStore = SqliteEventStore.open(path.join(tempDir(), 'events.sqlite'), { pollIntervalMs: 20 });
    try {
      const other = new EventLog(otherStore, serviceEventCatalog(), clock);
      await other.append('padding', [{ type: 'review-notices.started', data: {} }], 'any', { actor: { type: 'system', id: 'test' } });
      const material = newApiKey('agent');
      await other.append(projectKeysStream(PROJECT), [{ type: 'agent-key.issued', data: { keyId: key(7), projectId: PROJECT, tenantId: TENANT, scope: 'full', name: 'k', prefix: material.prefix, hash: material.hash, issuedAt: clock.now().toISOString(), issuedBy: { type: 'operator', id: 'elsewhere' } } }], 'any', { actor: { type: 'operator', id: 'elsewhere' } });
      await other.append(projectKeysStream(PROJECT), [{ type: 'agent-key.revoked', data: { keyId: key(7), projectId: PROJECT, revokedAt: clock.now().toISOString() } }], 'any', { actor: { type: 'operator', id: 'elsewhere' } });
      expect([...(await cache.of(other, PROJECT))]).to.deep.equal([[key(7), { type: 'operator', id: 'elsewhere' }]]);
    } finally {
      await otherStore.close();
    }
  });
});
