import type { Decider } from '../decider.ts';
import { conflict } from '../domain-error.ts';
import type { TenantEvent } from './access-events.ts';
import { displayName } from './access-values.ts';
import type { Caller } from './caller.ts';
import { assertCan } from './permissions.ts';

/** A tenant owns projects and users. Stream: tenantStream(id). */
export interface Tenant {
  id: string;
  name: string;
}

export type TenantState = Tenant | null;

export type TenantCommand = { type: 'create-tenant'; tenantId: string; name: string };

export interface TenantContext {
  caller: Caller;
}

export const tenantDecider: Decider<TenantState, TenantCommand, TenantEvent, TenantContext> = {
  initialState: () => null,

  evolve(state, event) {
    switch (event.type) {
      case 'tenant.created':
        return { id: event.data.tenantId, name: event.data.name };
      default:
        return state;
    }
  },

  decide(command, state, { caller }) {
    switch (command.type) {
      case 'create-tenant': {
        assertCan(caller, 'tenants.create');
        if (state) throw conflict(`tenant ${command.tenantId} already exists`);
        return [{ type: 'tenant.created', data: { tenantId: command.tenantId, name: displayName(command.name, 'name') } }];
      }
    }
  },
};
