import { expect } from 'chai';
import { fold, type Decider, type DomainEvent } from '../../src/domain/decider.ts';
import { DomainError, type DomainErrorCode } from '../../src/domain/domain-error.ts';
import type { EventCatalog } from '../../src/event-store/event-catalog.ts';

/**
 * The test kit's decider specification (Emmett's given/when/then): given these events, when this command, then
 * these events, nothing, or this DomainError. Every decided event is checked against its catalog schema, as the
 * event log checks it on append, so a test cannot pass with an event the log would refuse.
 */
export function specify<State, Command, Event extends DomainEvent, Context>(decider: Decider<State, Command, Event, Context>, options: { catalog?: EventCatalog; context?: () => Context } = {}) {
  return function given(history: readonly Event[]) {
    const state = fold(decider, [...history]);
    return {
      state,
      when(command: Command, context?: Context) {
        const run = (): Event[] => {
          const ctx = context ?? options.context?.();
          if (ctx === undefined) throw new Error('the specification needs a context: give one to when(), or a default to specify()');
          const events = decider.decide(command, fold(decider, [...history]), ctx);
          for (const event of events) {
            if (options.catalog) expect(() => options.catalog!.validate(event.type, event.data), `${event.type} against its schema`).not.to.throw();
          }
          return events;
        };
        return {
          // biome-ignore lint/suspicious/noThenProperty: the given/when/then vocabulary of the decider specification (as in Emmett); the object is never awaited, and awaiting it by mistake fails the assertion instead of passing silently.
          then(expected: readonly Event[]): Event[] {
            const events = run();
            expect(events).to.deep.equal(expected);
            return events;
          },
          thenNothing(): void {
            expect(run()).to.deep.equal([]);
          },
          thenFails(code: DomainErrorCode, message?: RegExp): DomainError {
            return expectDomainError(run, code, message);
          },
          /** The events, for checks the exact list does not express. */
          events: run,
        };
      },
    };
  };
}

/** Runs `fn` and answers the DomainError it throws, of this code (and message). */
export function expectDomainError(fn: () => unknown, code: DomainErrorCode, message?: RegExp): DomainError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${code}`).to.be.instanceOf(DomainError);
  const error = caught as DomainError;
  expect(error.code, error.message).to.equal(code);
  if (message) expect(error.message).to.match(message);
  return error;
}
