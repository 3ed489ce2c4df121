import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { reservationStream } from '../../../src/application/reservations.ts';
import { fold, type DomainEvent } from '../../../src/domain/decider.ts';
import { accessEvents } from '../../../src/domain/access/access-events.ts';
import {
  projectKeysStream,
  projectStream,
  tenantStream,
  userStream,
} from '../../../src/domain/access/access-streams.ts';
import type { Caller } from '../../../src/domain/access/caller.ts';
import { keyDecider } from '../../../src/domain/access/key-decider.ts';
import { projectDecider } from '../../../src/domain/access/project-decider.ts';
import { tenantDecider } from '../../../src/domain/access/tenant-decider.ts';
import { userDecider } from '../../../src/domain/access/user-decider.ts';
import { EventCatalog, EventValidationError } from '../../../src/event-store/event-catalog.ts';
import { newApiKey } from '../../../src/security/api-keys.ts';
import { hashPassword } from '../../../src/security/password-hashing.ts';

describe('access events', () => {
  const catalog = new EventCatalog([...accessEvents]);

  it('registers every type once, at version 1', () => {
    expect(catalog.types()).to.have.length(42);
    for (const definition of accessEvents) expect(definition.version).to.equal(1);
    expect(catalog.types()).to.include.members(['tenant.created', 'project.ip-allowlist-entry-removed', 'user.disabled', 'user.session-revoked', 'agent-key.revoked', 'agent-key.used', 'public-key.issued', 'user.invited', 'user.invitation-accepted', 'tenant.oidc-configured', 'tenant.oidc-removed', 'user.identity-linked', 'user.signed-in', 'tenant.second-factor-policy-changed', 'user.totp-enrolled', 'user.totp-removed', 'user.recovery-codes-issued', 'user.passkey-registered', 'user.passkey-removed', 'user.second-factor-reset', 'user.second-factor-failed', 'tenant.saml-configured', 'tenant.saml-removed']);
  });

  it('never carries a clear password or key: a whole bootstrap, serialised', async () => {
    const password = 'Admin-password-42!';
    const operator: Caller = { kind: 'operator', operatorId: 'ops' };
    const tenantId = randomUUID();
    const projectId = randomUUID();
    const userId = randomUUID();
    const agentKey = newApiKey('agent');
    const publicKey = newApiKey('public');
    const project = { id: projectId, tenantId, plan: 'free' as const };
    const now = new Date('2026-05-01T00:00:00.000Z');

    const events: DomainEvent[] = [
      ...tenantDecider.decide({ type: 'create-tenant', tenantId, name: 'Acme' }, null, { caller: operator }),
      ...projectDecider.decide({ type: 'create-project', projectId, tenantId, name: 'Site', slug: 'site', plan: 'free' }, null, { caller: operator }),
      ...userDecider.decide({ type: 'create-user', userId, tenantId, email: 'admin@example.com', role: 'tenant_admin', passwordHash: await hashPassword(password, { N: 1024, r: 8, p: 1 }) }, null, { caller: operator }),
    ];
    const keyEvents = keyDecider.decide({ type: 'issue-agent-key', keyId: randomUUID(), scope: 'full', name: 'bootstrap', prefix: agentKey.prefix, hash: agentKey.hash }, keyDecider.initialState(), { caller: operator, project, now });
    const keyState = fold(keyDecider, keyEvents);
    keyEvents.push(...keyDecider.decide({ type: 'issue-public-key', keyId: randomUUID(), prefix: publicKey.prefix, hash: publicKey.hash }, keyState, { caller: operator, project, now }));
    events.push(...keyEvents);
    events.push(...userDecider.decide({ type: 'change-password', passwordHash: await hashPassword('Another-password-43', { N: 1024, r: 8, p: 1 }) }, fold(userDecider, events.filter((e) => e.type.startsWith('user.')) as never), { caller: operator }));

    const stored = events.map((event) => ({ type: event.type, data: catalog.validate(event.type, event.data) }));
    const json = JSON.stringify(stored);
    for (const secret of [password, 'Another-password-43', agentKey.key, publicKey.key, agentKey.key.slice(12), publicKey.key.slice(16)]) {
      expect(json).not.to.contain(secret);
    }
    expect(json).to.contain(agentKey.hash).and.to.contain(agentKey.prefix);
  });

  it('refuses, at the catalog, a whole key as prefix or a password as hash', () => {
    const key = newApiKey('agent');
    const data = { keyId: randomUUID(), projectId: randomUUID(), tenantId: randomUUID(), scope: 'full', name: 'x', prefix: key.prefix, hash: key.hash, issuedAt: '2026-05-01T00:00:00.000Z' };
    expect(() => catalog.validate('agent-key.issued', data)).not.to.throw();
    expect(() => catalog.validate('agent-key.issued', { ...data, prefix: key.key })).to.throw(EventValidationError);
    expect(() => catalog.validate('agent-key.issued', { ...data, hash: key.key })).to.throw(EventValidationError);
    const clearKeyDropped = catalog.validate('agent-key.issued', { ...data, key: key.key });
    expect(JSON.stringify(clearKeyDropped)).not.to.contain(key.key);
    expect(() => catalog.validate('user.password-changed', { userId: randomUUID(), passwordHash: 'hunter2hunter2' })).to.throw(EventValidationError);
  });

  it('names streams per aggregate, and reservations without personal data', () => {
    expect(tenantStream('t')).to.equal('tenant-t');
    expect(projectStream('p')).to.equal('project-p');
    expect(userStream('u')).to.equal('user-u');
    expect(projectKeysStream('p')).to.equal('project-keys-p');
    const email = reservationStream('user-email', 'jane@example.com');
    expect(email).to.match(/^reservation-[0-9a-f]{64}$/).and.not.to.contain('jane');
    expect(reservationStream('user-email', 'jane@example.com')).to.equal(email);
    expect(reservationStream('project-slug', 'jane@example.com')).not.to.equal(email);
  });
});
