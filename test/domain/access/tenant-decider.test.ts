import { tenantDecider } from '../../../src/domain/access/tenant-decider.ts';
import { admin, agent, operator, TENANT, given } from './support.ts';

describe('tenant decider', () => {
  const create = { type: 'create-tenant' as const, tenantId: TENANT, name: '  Acme Inc. ' };

  it('creates a tenant for an operator', () => {
    given(tenantDecider, []).when(create, { caller: operator }).then([{ type: 'tenant.created', data: { tenantId: TENANT, name: 'Acme Inc.' } }]);
  });

  it('is an operator action only', () => {
    given(tenantDecider, []).when(create, { caller: admin }).thenFails('FORBIDDEN', /only an operator/);
    given(tenantDecider, []).when(create, { caller: agent('full') }).thenFails('FORBIDDEN');
  });

  it('refuses a second creation and an empty name', () => {
    given(tenantDecider, [{ type: 'tenant.created', data: { tenantId: TENANT, name: 'Acme' } }]).when(create, { caller: operator }).thenFails('CONFLICT');
    given(tenantDecider, []).when({ ...create, name: ' ' }, { caller: operator }).thenFails('VALIDATION_ERROR', /name/);
  });
});
