import type { Principal } from '../principal.ts';

/**
 * Who operates the service itself: projections are shared by every tenant it holds, so retrying, skipping
 * and rebuilding them, and reading the events they fail on (other tenants' stream ids and messages), is for
 * its operators, not for every tenant's admins. Operators are the tenant_admin sessions of the tenants named
 * in OPERATOR_TENANT_IDS; with none named, those of the only tenant while the service holds exactly one (a
 * single-organisation install works without a setting, and a second tenant ends that until one is named).
 * Agent keys never operate.
 */
export function isServiceOperator(principal: Principal, service: { operatorTenantIds: readonly string[]; tenantCount: number }): boolean {
  if (principal.kind !== 'user' || principal.role !== 'tenant_admin') return false;
  if (service.operatorTenantIds.length > 0) return service.operatorTenantIds.includes(principal.tenantId.toLowerCase());
  return service.tenantCount === 1;
}
