import { notFound } from '../domain-error.ts';
import type { Principal } from '../principal.ts';

/**
 * Whoever a command comes from: a console user or an agent key (the authenticated Principal), or an
 * operator at the command line (bootstrap, plan changes), who is trusted with everything.
 */
export interface OperatorPrincipal {
  kind: 'operator';
  /** A name for the audit trail, e.g. the OS user running the CLI. */
  operatorId: string;
}

export type Caller = Principal | OperatorPrincipal;

/**
 * Tenant isolation: a user sees only their tenant, an agent key only its project. Anything else is
 * NOT_FOUND, never FORBIDDEN, so a caller cannot learn that another tenant's resource exists.
 */
export function assertCallerSeesProject(caller: Caller, project: { id: string; tenantId: string }): void {
  const visible =
    caller.kind === 'operator' ||
    (caller.kind === 'user' && caller.tenantId === project.tenantId) ||
    (caller.kind === 'agent' && caller.projectId === project.id && caller.tenantId === project.tenantId);
  if (!visible) throw notFound('project not found');
}

export function assertCallerSeesTenant(caller: Caller, tenantId: string, what: string): void {
  if (caller.kind !== 'operator' && caller.tenantId !== tenantId) throw notFound(`${what} not found`);
}

/** The event-metadata actor for a caller; agent keys are named by id, never by value. */
export function actorOf(caller: Caller): { type: 'user' | 'agent' | 'operator'; id: string } {
  switch (caller.kind) {
    case 'user':
      return { type: 'user', id: caller.userId };
    case 'agent':
      return { type: 'agent', id: caller.keyId };
    case 'operator':
      return { type: 'operator', id: caller.operatorId };
  }
}
