import { z } from 'zod';

/**
 * Form set slugs follow the entry slug rules of spec section 2 (URL-safe: lowercase letters, digits,
 * hyphens), made precise: 1 to 100 characters, no leading, trailing or doubled hyphen.
 */
export const FORM_SET_SLUG_MAX_LENGTH = 100;
export const FORM_SET_SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const FORM_SET_SLUG_RULE = 'lowercase letters, digits and single hyphens between them, at most 100 characters';

/** Why the slug breaks the rule, naming the rule, or null when it is valid. */
export function validateFormSetSlug(slug: unknown): string | null {
  if (typeof slug !== 'string') return 'must be a string';
  if (slug.length === 0) return 'must not be empty';
  if (slug.length > FORM_SET_SLUG_MAX_LENGTH) return `must be at most ${FORM_SET_SLUG_MAX_LENGTH} characters`;
  if (/[^a-z0-9-]/.test(slug)) return `may only contain ${FORM_SET_SLUG_RULE.replace(', at most 100 characters', '')}`;
  if (slug.startsWith('-') || slug.endsWith('-')) return 'must not begin or end with a hyphen';
  if (slug.includes('--')) return 'must not contain two hyphens in a row';
  return null;
}

export const formSetSlugSchema = z.string().superRefine((slug, ctx) => {
  const problem = validateFormSetSlug(slug);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
