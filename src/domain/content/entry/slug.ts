import { invalid } from '../../domain-error.ts';

/**
 * Entry slugs (spec section 2: "URL-safe: lowercase letters, digits, hyphens"). Our precise rules:
 * - 1 to 200 characters;
 * - only a-z, 0-9 and "-" (ASCII only: no upper case, no accented letters, no "_" or ".");
 * - no hyphen at the start or the end, and never two hyphens in a row.
 * So a slug is one or more groups of [a-z0-9] joined by single hyphens, and every slug is usable as
 * one URL path segment unchanged.
 */
export const SLUG_MIN_LENGTH = 1;
export const SLUG_MAX_LENGTH = 200;
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** The first rule the slug breaks, as a sentence naming the rule; null when the slug is valid. */
export function slugProblem(slug: unknown, field = 'slug'): string | null {
  if (typeof slug !== 'string') return `${field} must be a string`;
  if (slug.length < SLUG_MIN_LENGTH) return `${field} must not be empty`;
  if (slug.length > SLUG_MAX_LENGTH) return `${field} must be at most ${SLUG_MAX_LENGTH} characters (it has ${slug.length})`;
  const bad = [...slug].find((c) => !/[a-z0-9-]/.test(c));
  if (bad !== undefined) {
    const shown = /[A-Z]/.test(bad) ? `upper-case "${bad}"` : JSON.stringify(bad);
    return `${field} may contain only lowercase letters a-z, digits 0-9 and hyphens; found ${shown}`;
  }
  if (slug.startsWith('-') || slug.endsWith('-')) return `${field} must not start or end with a hyphen`;
  if (slug.includes('--')) return `${field} must not contain two hyphens in a row`;
  return null;
}

/** Throws VALIDATION_ERROR naming the broken rule. */
export function validateSlug(slug: unknown, field = 'slug'): asserts slug is string {
  const problem = slugProblem(slug, field);
  if (problem) throw invalid(problem, 'A slug is lowercase letters a-z, digits and single hyphens between them, 1 to 200 characters, e.g. "my-first-post".');
}

/**
 * The slug of the `n`th copy of an entry with slug `slug`: `{slug}-copy`, then `{slug}-copy-2`, `{slug}-copy-3`,
 * ... The original part is shortened (at a hyphen-free end) so the result stays within SLUG_MAX_LENGTH.
 */
export function copySlug(slug: string, n: number): string {
  const suffix = n <= 1 ? '-copy' : `-copy-${n}`;
  const base = slug.slice(0, SLUG_MAX_LENGTH - suffix.length).replace(/-+$/, '');
  return `${base}${suffix}`;
}
