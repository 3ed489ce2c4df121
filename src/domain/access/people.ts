import type { EventActor } from '../decider.ts';
import type { Principal } from '../principal.ts';

/**
 * People, as four eyes and self-approval compare them. A person is a console user (by user id) or an
 * operator at the command line (by the name the CLI records). An agent key is not a person: it acts for the
 * person who issued it, so whatever it writes, submits or approves is its issuer's (a revision written with
 * bob's key is bob's, and neither bob's session nor any other key bob issued may approve it under fourEyes).
 *
 * Keys issued before issuers were recorded in `agent-key.issued` are attributed to the actor of that event
 * (the log has always recorded who appended it: the tenant_admin session or the operator), so every key has an
 * issuer. A key whose issuer cannot be found at all is 'unknown': four eyes cannot be established for it, and
 * the decision refuses rather than guess.
 */
export interface Person {
  type: 'user' | 'operator';
  id: string;
}

/** The person who issued each of a project's agent keys, by key id (revoked keys included: what they wrote stays theirs). */
export type KeyIssuers = ReadonlyMap<string, Person>;

export const NO_KEY_ISSUERS: KeyIssuers = new Map();

/** The person an issuing actor is (a console user or an operator), or null for anything else (an agent key, the system). */
export function personFromActor(actor: EventActor | undefined | null): Person | null {
  if (!actor || typeof actor.id !== 'string' || actor.id.length === 0) return null;
  return actor.type === 'user' || actor.type === 'operator' ? { type: actor.type, id: actor.id } : null;
}

/**
 * The person an actor of the log stands for: a user or an operator is themselves; an agent key is its
 * issuer ('unknown' when the project does not know the key); anything else (the system, a public caller) is
 * no person (null): it cannot collude, and four eyes does not count it.
 */
export function personOf(actor: EventActor, issuers: KeyIssuers): Person | 'unknown' | null {
  if (actor.type === 'agent') return issuers.get(actor.id) ?? 'unknown';
  return personFromActor(actor);
}

/** The actor a principal appends as (see actorOf in caller.ts), for comparing it with the log's actors. */
export function principalAsActor(principal: Principal): EventActor {
  return principal.kind === 'user' ? { type: 'user', id: principal.userId } : { type: 'agent', id: principal.keyId };
}

export function samePerson(a: Person, b: Person): boolean {
  return a.type === b.type && a.id === b.id;
}

/** A person in a message: "user 1b2c…" or "operator alice". */
export function describePerson(person: Person): string {
  return `${person.type} ${person.id}`;
}
