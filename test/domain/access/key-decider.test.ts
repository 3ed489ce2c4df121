import { expect } from 'chai';
import { fold } from '../../../src/domain/decider.ts';
import type { KeyEvent } from '../../../src/domain/access/access-events.ts';
import { activeAgentKeys, keyDecider, type KeyContext } from '../../../src/domain/access/key-decider.ts';
import type { Plan } from '../../../src/domain/plans.ts';
import { newApiKey } from '../../../src/security/api-keys.ts';
import { ADMIN_ID, admin, agent, editor, foreignAdmin, operator, OTHER_PROJECT, PROJECT, TENANT, given } from './support.ts';
import { keyIssuersOf } from '../../../src/domain/access/key-decider.ts';

const KEY_1 = 'f1111111-1111-4111-8111-111111111111';
const KEY_2 = 'f2222222-2222-4222-8222-222222222222';
const KEY_3 = 'f3333333-3333-4333-8333-333333333333';
const NOW = new Date('2026-04-01T10:00:00.000Z');

const context = (caller: KeyContext['caller'], plan: Plan = 'free'): KeyContext => ({ caller, project: { id: PROJECT, tenantId: TENANT, plan }, now: NOW });

function issue(keyId: string, scope: 'full' | 'content' | 'schema' = 'full') {
  const material = newApiKey('agent');
  return { material, command: { type: 'issue-agent-key' as const, keyId, scope, name: 'CI agent', prefix: material.prefix, hash: material.hash } };
}

function issued(keyId: string): KeyEvent {
  const { material } = issue(keyId);
  return {
    type: 'agent-key.issued',
    data: { keyId, projectId: PROJECT, tenantId: TENANT, scope: 'full', name: 'CI agent', prefix: material.prefix, hash: material.hash, issuedAt: '2026-03-01T00:00:00.000Z' },
  };
}
const revoked = (keyId: string): KeyEvent => ({ type: 'agent-key.revoked', data: { keyId, projectId: PROJECT, revokedAt: '2026-03-02T00:00:00.000Z' } });

describe('key decider', () => {
  describe('who a key acts for', () => {
    it('records the person who issued it: the tenant_admin session, or the operator at the command line', () => {
      const byAdmin = given(keyDecider, []).when(issue(KEY_1).command, context(admin)).events();
      expect(byAdmin[0]!.data).to.deep.include({ issuedBy: { type: 'user', id: ADMIN_ID } });
      const byOperator = given(keyDecider, []).when(issue(KEY_1).command, context(operator)).events();
      expect(byOperator[0]!.data).to.deep.include({ issuedBy: { type: 'operator', id: 'ops' } });
    });

    it("folds each key's issuer, and takes a key issued before issuers were recorded as its issuing event's actor", () => {
      const recorded: KeyEvent = { ...issued(KEY_1), data: { ...issued(KEY_1).data, issuedBy: { type: 'user', id: ADMIN_ID } } } as KeyEvent;
      const legacy = { ...issued(KEY_2), actor: { type: 'operator', id: 'root' } } as KeyEvent;
      const unattributed = issued(KEY_3);
      const state = fold(keyDecider, [recorded, legacy, unattributed, revoked(KEY_1)]);
      // A revoked key keeps its issuer: what it wrote stays its issuer's.
      expect([...keyIssuersOf(state)]).to.deep.equal([
        [KEY_1, { type: 'user', id: ADMIN_ID }],
        [KEY_2, { type: 'operator', id: 'root' }],
      ]);
    });
  });

  describe('agent keys', () => {
    it('are issued with the prefix and hash only, never the key', () => {
      const { material, command } = issue(KEY_1, 'content');
      const events = given(keyDecider, []).when(command, context(admin)).then([
        {
          type: 'agent-key.issued',
          data: { keyId: KEY_1, projectId: PROJECT, tenantId: TENANT, scope: 'content', name: 'CI agent', prefix: material.prefix, hash: material.hash, issuedAt: NOW.toISOString(), issuedBy: { type: 'user', id: ADMIN_ID } },
        },
      ]);
      const json = JSON.stringify(events);
      expect(json).not.to.contain(material.key);
      expect(json).not.to.contain(material.key.slice(12));
      expect(material.prefix).to.have.length(12);
    });

    it('refuses anything but a display prefix and a SHA-256 hash', () => {
      const { material, command } = issue(KEY_1);
      given(keyDecider, []).when({ ...command, prefix: material.key }, context(admin)).thenFails('VALIDATION_ERROR', /never the whole key/);
      given(keyDecider, []).when({ ...command, hash: material.key }, context(admin)).thenFails('VALIDATION_ERROR', /SHA-256/);
      given(keyDecider, []).when({ ...command, scope: 'admin' as 'full' }, context(admin)).thenFails('VALIDATION_ERROR', /scope/);
      given(keyDecider, []).when({ ...command, name: '' }, context(admin)).thenFails('VALIDATION_ERROR', /name/);
    });

    for (const plan of ['free', 'solo'] as const) {
      it(`allow one active key on the ${plan} plan: a second is PLAN_REQUIRED, with a hint`, () => {
        const error = given(keyDecider, [issued(KEY_1)]).when(issue(KEY_2).command, context(admin, plan)).thenFails('PLAN_REQUIRED', /allows one active agent key per project/);
        expect(error.message).to.contain(plan.charAt(0).toUpperCase() + plan.slice(1));
        expect(error.hint).to.match(/Revoke the active agent key first, or upgrade the project to Standard or above/);
      });

      it(`allow a new key on the ${plan} plan once the active one is revoked`, () => {
        expect(given(keyDecider, [issued(KEY_1), revoked(KEY_1)]).when(issue(KEY_2).command, context(admin, plan)).events()).to.have.length(1);
      });
    }

    for (const plan of ['standard', 'business', 'enterprise'] as const) {
      it(`allow several active keys on the ${plan} plan`, () => {
        expect(given(keyDecider, [issued(KEY_1), issued(KEY_2)]).when(issue(KEY_3).command, context(admin, plan)).events()).to.have.length(1);
      });
    }

    it('count only active keys', () => {
      const state = fold(keyDecider, [issued(KEY_1), issued(KEY_2), revoked(KEY_1)]);
      expect(activeAgentKeys(state).map((k) => k.id)).to.deep.equal([KEY_2]);
      expect(state.agentKeys.find((k) => k.id === KEY_1)?.revokedAt).to.equal('2026-03-02T00:00:00.000Z');
    });

    it('are never issued by an agent key, whatever its scope, nor by a tenant user', () => {
      for (const scope of ['full', 'schema', 'content'] as const) {
        given(keyDecider, []).when(issue(KEY_1).command, context(agent(scope), 'enterprise')).thenFails('FORBIDDEN', /Agent keys can never issue other API keys/);
      }
      given(keyDecider, []).when(issue(KEY_1).command, context(editor)).thenFails('FORBIDDEN', /tenant_admin/);
      expect(given(keyDecider, []).when(issue(KEY_1).command, context(operator)).events()).to.have.length(1);
    });

    it('are invisible to other tenants and to keys of other projects', () => {
      given(keyDecider, []).when(issue(KEY_1).command, context(foreignAdmin)).thenFails('NOT_FOUND');
      given(keyDecider, [issued(KEY_1)]).when({ type: 'revoke-agent-key', keyId: KEY_1 }, context(agent('full', OTHER_PROJECT))).thenFails('NOT_FOUND');
    });

    it('refuse a duplicate id or hash', () => {
      given(keyDecider, [issued(KEY_1)]).when(issue(KEY_1).command, context(admin, 'standard')).thenFails('CONFLICT');
      const first = issued(KEY_1);
      const { command } = issue(KEY_2);
      given(keyDecider, [first]).when({ ...command, hash: (first.data as { hash: string }).hash }, context(admin, 'standard')).thenFails('CONFLICT');
    });

    it('are revoked once; revoking again changes nothing; an unknown key is NOT_FOUND', () => {
      given(keyDecider, [issued(KEY_1)]).when({ type: 'revoke-agent-key', keyId: KEY_1 }, context(admin)).then([
        { type: 'agent-key.revoked', data: { keyId: KEY_1, projectId: PROJECT, revokedAt: NOW.toISOString() } },
      ]);
      given(keyDecider, [issued(KEY_1), revoked(KEY_1)]).when({ type: 'revoke-agent-key', keyId: KEY_1 }, context(admin)).then([]);
      given(keyDecider, []).when({ type: 'revoke-agent-key', keyId: KEY_1 }, context(admin)).thenFails('NOT_FOUND');
      given(keyDecider, [issued(KEY_1)]).when({ type: 'revoke-agent-key', keyId: KEY_1 }, context(agent('full'))).thenFails('FORBIDDEN');
    });
  });

  describe('public keys', () => {
    it('are issued on any plan beside an agent key, stored as prefix and hash', () => {
      const material = newApiKey('public');
      const events = given(keyDecider, [issued(KEY_1)])
        .when({ type: 'issue-public-key', keyId: KEY_2, prefix: material.prefix, hash: material.hash }, context(admin, 'free'))
        .then([{ type: 'public-key.issued', data: { keyId: KEY_2, projectId: PROJECT, tenantId: TENANT, prefix: material.prefix, hash: material.hash, issuedAt: NOW.toISOString() } }]);
      expect(JSON.stringify(events)).not.to.contain(material.key);
      expect(material.prefix).to.have.length(16);
    });

    it('refuse an agent-key prefix and agent callers', () => {
      const agentMaterial = newApiKey('agent');
      given(keyDecider, []).when({ type: 'issue-public-key', keyId: KEY_2, prefix: agentMaterial.prefix, hash: agentMaterial.hash }, context(admin)).thenFails('VALIDATION_ERROR');
      const material = newApiKey('public');
      given(keyDecider, []).when({ type: 'issue-public-key', keyId: KEY_2, prefix: material.prefix, hash: material.hash }, context(agent('full'))).thenFails('FORBIDDEN', /never issue other API keys/);
    });

    it('are revoked once', () => {
      const material = newApiKey('public');
      const history: KeyEvent[] = [{ type: 'public-key.issued', data: { keyId: KEY_2, projectId: PROJECT, tenantId: TENANT, prefix: material.prefix, hash: material.hash, issuedAt: NOW.toISOString() } }];
      given(keyDecider, history).when({ type: 'revoke-public-key', keyId: KEY_2 }, context(admin)).then([{ type: 'public-key.revoked', data: { keyId: KEY_2, projectId: PROJECT, revokedAt: NOW.toISOString() } }]);
      given(keyDecider, [...history, { type: 'public-key.revoked', data: { keyId: KEY_2, projectId: PROJECT, revokedAt: NOW.toISOString() } }])
        .when({ type: 'revoke-public-key', keyId: KEY_2 }, context(admin))
        .then([]);
      given(keyDecider, history).when({ type: 'revoke-public-key', keyId: KEY_1 }, context(admin)).thenFails('NOT_FOUND');
    });
  });
});
