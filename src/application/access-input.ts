/**
 * The access services' checks of their callers' input (plans, scopes, passwords, slugs) and the shapes of
 * their answers (positions, refusals of names taken).
 */
import { conflict, invalid } from '../domain/domain-error.ts';
import { PLANS, type Plan } from '../domain/plans.ts';
import type { AgentScope } from '../domain/principal.ts';
import { AGENT_KEY_SCOPES } from '../domain/access/key-decider.ts';
import { passwordProblem } from '../security/password-hashing.ts';

/**
 * A project slug from a display name: lower-cased, accents dropped, every run of other characters one
 * hyphen, at most 63 characters. VALIDATION_ERROR when nothing is left (a name in a script without
 * Latin letters or digits): give the slug then.
 */
export function slugFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  if (slug.length === 0) throw invalid(`slug: none can be derived from the name ${JSON.stringify(name)}`, 'Give a slug: lowercase letters, digits and hyphens, for example my-site.');
  return slug;
}

/** Drops the fields left undefined, so a patch command names only what the caller gave. */
export function definedOnly<T extends Record<string, unknown>>(patch: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as never;
}

export function planValue(plan: string): Plan {
  const value = plan.trim().toLowerCase();
  if (!(PLANS as readonly string[]).includes(value)) throw invalid(`plan must be one of ${PLANS.join(', ')}`);
  return value as Plan;
}

export function scopeValue(scope: string): AgentScope {
  const value = scope.trim().toLowerCase();
  if (!(AGENT_KEY_SCOPES as readonly string[]).includes(value)) throw invalid(`scope must be one of ${AGENT_KEY_SCOPES.join(', ')}`);
  return value as AgentScope;
}

export function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw invalid(problem);
}

export function taken(what: string, key: string) {
  return conflict(`The ${what} "${key}" is already in use.`, `Choose another ${what}.`);
}

/** Every method here appends to, or reads from, a stream that exists, so there is always a position. */
export function positionOf(result: { position: bigint | null }): bigint {
  if (result.position === null) throw new Error('expected a log position after a write');
  return result.position;
}
