/**
 * The shape of every aggregate (Emmett's decider): state is folded from the aggregate's own events,
 * and a command either yields new events or throws a DomainError. Pure: no clock (time comes in the
 * context), no I/O, no randomness (ids come in the command or context).
 */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
  /**
   * Who caused the event, when it is folded from the log (the event's metadata actor) or right after its
   * append (the append's actor). Deciders never set it: the application records it with the append.
   */
  actor?: EventActor;
}

/** An actor as the log records it: a user by id, an agent key by key id, the system, an operator. */
export interface EventActor {
  type: string;
  id: string;
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
