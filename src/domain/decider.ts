/**
 * The shape of every aggregate (Emmett's decider): state is folded from the aggregate's own events,
 * and a command either yields new events or throws a DomainError. Pure: no clock (time comes in the
 * context), no I/O, no randomness (ids come in the command or context).
 */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
}

export interface Decider<State, Command, Event extends DomainEvent, Context> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State, context: Context): Event[];
}

/** Folds a history into the current state. */
export function fold<State, Event extends DomainEvent>(decider: Pick<Decider<State, never, Event, never>, 'initialState' | 'evolve'>, events: Iterable<Event>): State {
  let state = decider.initialState();
  for (const event of events) state = decider.evolve(state, event);
  return state;
}
