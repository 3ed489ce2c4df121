import { expect } from 'chai';
import { fold, type Decider, type DomainEvent } from '../../../src/domain/decider.ts';
import { DomainError, type DomainErrorCode } from '../../../src/domain/domain-error.ts';
import type { Caller } from '../../../src/domain/access/caller.ts';
import { accessEvents } from '../../../src/domain/access/access-events.ts';
import { EventCatalog } from '../../../src/event-store/event-catalog.ts';

const catalog = new EventCatalog([...accessEvents]);

/**
 * Given these events, when this command (in this context): the events decided, each checked against its
 * catalog schema (what the event store would append), or the DomainError thrown.
 */
export function given<State, Command, Event extends DomainEvent, Context>(decider: Decider<State, Command, Event, Context>, history: Event[]) {
  return {
    when(command: Command, context: Context) {
      const run = () => {
        const events = decider.decide(command, fold(decider, history), context);
        for (const event of events) catalog.validate(event.type, event.data);
        return events;
      };
      return {
        then(expected: Event[]): Event[] {
          const events = run();
          expect(events).to.deep.equal(expected);
          return events;
        },
        events: run,
        thenFails(code: DomainErrorCode, message?: RegExp): DomainError {
          let caught: unknown;
          try {
            run();
          } catch (error) {
            caught = error;
          }
          expect(caught, 'expected a DomainError').to.be.instanceOf(DomainError);
          const error = caught as DomainError;
          expect(error.code, error.message).to.equal(code);
          if (message) expect(error.message).to.match(message);
          return error;
        },
      };
    },
  };
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
