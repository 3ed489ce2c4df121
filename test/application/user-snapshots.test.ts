import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { serviceEventCatalog } from '../../src/service/event-catalog.ts';
import { AggregateSnapshots } from '../../src/application/aggregate-snapshots.ts';
import { loadAggregate } from '../../src/application/command-handler.ts';
import { AccessService } from '../../src/application/access-service.ts';
import { SqliteSnapshotStore } from '../../src/snapshots/sqlite-snapshot-store.ts';
import { userStream } from '../../src/domain/access/access-streams.ts';
import { USER_STATE_VERSION, userDecider, type UserState } from '../../src/domain/access/user-decider.ts';
import { tempDir } from '../support/temp-dir.ts';

const OPERATOR = { kind: 'operator' as const, operatorId: 'test' };

/**
 * A console user's aggregate loads from a stored snapshot (their stream grows by a sign-in each session; see
 * bench:user-history): the state from the snapshot and the events after it is the state of folding the whole
 * stream, whatever the user did (sign-ins and sign-outs, a custom role given, notice preferences, an identity
 * linked), and the snapshot is really there to be used.
 */
describe('user aggregates from snapshots', () => {
  it('answer what folding the whole stream answers, for a history of every kind of user event', async () => {
    const dir = tempDir();
    const clock = new ManualClock('2026-12-07T10:00:00.000Z');
    const events = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    const store = SqliteSnapshotStore.open(path.join(dir, 'snapshots.sqlite'));
    try {
      const log = new EventLog(events, serviceEventCatalog(), clock);
      const userSnapshots = new AggregateSnapshots<UserState>({ kind: 'user', version: USER_STATE_VERSION, store, every: 8, cacheBytes: 0, clock });
      const access = new AccessService({ log, clock, userSnapshots });
      const project = await access.bootstrap(OPERATOR, { projectName: 'Snapshots', plan: 'business', adminEmail: 'admin@example.com', adminPassword: 'correct horse battery staple', contentLocales: { locales: ['en'], defaultLocale: 'en' } });
      const role = await access.roles.define(OPERATOR, project.tenantId, { name: 'Legal reviewer', capabilities: ['content.approve'] });
      const created = await access.createUser(OPERATOR, { tenantId: project.tenantId, email: 'member@example.com', password: 'correct horse battery staple', role: 'tenant_user' });
      const member = { kind: 'user' as const, userId: created.userId, tenantId: project.tenantId, role: 'tenant_user' as const };
      for (let i = 0; i < 30; i++) {
        const sessionId = randomUUID();
        const expiresAt = new Date(clock.now().getTime() + 3_600_000);
        await access.signIn.recordSignIn(member, { userId: created.userId, sessionId, expiresAt });
        if (i % 3 === 0) await access.signOut(member, { sessionId, expiresAt });
        if (i === 10) await access.changeUserRole(OPERATOR, created.userId, 'tenant_user', { roleId: role.role.roleId });
        if (i === 20) await access.setNoticePreferences(member, created.userId, { reviewNotices: false });
        if (i === 25) await access.signIn.link(created.userId, 'https://idp.example.com', 'subject-1');
        clock.advance(60_000);
      }
      const whole = await loadAggregate(log, userStream(created.userId), userDecider);
      const stored = await store.get(userStream(created.userId));
      expect(stored, 'a snapshot of the user was stored').to.not.equal(null);
      expect(stored!.kind).to.equal('user');
      expect(stored!.revision > 30n, `snapshot at revision ${stored!.revision}`).to.equal(true);
      // A new process: nothing cached, the stored snapshot and the events after it.
      const fresh = new AggregateSnapshots<UserState>({ kind: 'user', version: USER_STATE_VERSION, store, cacheBytes: 0, clock });
      const fromSnapshot = await fresh.load(log, userStream(created.userId), userDecider);
      expect(fromSnapshot).to.deep.equal(whole);
      expect(whole.state).to.deep.include({ roleId: role.role.roleId, reviewNotices: false, identities: { 'https://idp.example.com': 'subject-1' } });
    } finally {
      await store.close();
      await events.close();
    }
  });
});
