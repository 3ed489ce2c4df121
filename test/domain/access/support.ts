import type { Decider, DomainEvent } from '../../../src/domain/decider.ts';
import { specify } from '../../support/decider-spec.ts';
import type { Caller } from '../../../src/domain/access/caller.ts';
import { accessEvents } from '../../../src/domain/access/access-events.ts';
import { EventCatalog } from '../../../src/event-store/event-catalog.ts';

const catalog = new EventCatalog([...accessEvents]);

/** The kit's decider specification (test/support/decider-spec.ts), with the access events' catalog. */
export function given<State, Command, Event extends DomainEvent, Context>(decider: Decider<State, Command, Event, Context>, history: Event[]) {
  return specify(decider, { catalog })(history);
}

export const TENANT = '0b7e4c6a-6f3e-4d5c-9a51-3b1f9f5b2c01';
export const OTHER_TENANT = '0b7e4c6a-6f3e-4d5c-9a51-3b1f9f5b2c02';
export const PROJECT = '7d2a9c1e-2b44-4e8a-8f0a-6c1d2e3f4a01';
export const OTHER_PROJECT = '7d2a9c1e-2b44-4e8a-8f0a-6c1d2e3f4a02';
export const ADMIN_ID = 'a1111111-1111-4111-8111-111111111111';
export const EDITOR_ID = 'a2222222-2222-4222-8222-222222222222';

export const operator: Caller = { kind: 'operator', operatorId: 'ops' };
export const admin: Caller = { kind: 'user', userId: ADMIN_ID, tenantId: TENANT, role: 'tenant_admin' };
export const editor: Caller = { kind: 'user', userId: EDITOR_ID, tenantId: TENANT, role: 'tenant_user' };
export const foreignAdmin: Caller = { kind: 'user', userId: 'a3333333-3333-4333-8333-333333333333', tenantId: OTHER_TENANT, role: 'tenant_admin' };
export const agent = (scope: 'full' | 'content' | 'schema', projectId = PROJECT): Caller => ({
  kind: 'agent',
  keyId: 'b1111111-1111-4111-8111-111111111111',
  tenantId: TENANT,
  projectId,
  scope,
});
