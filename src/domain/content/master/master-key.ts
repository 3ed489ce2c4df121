import { z } from 'zod';

/** A master entity's key: what select, radio and multiselect fields name in masterEntityKey. */
export const MASTER_KEY_PATTERN = /^[a-z][a-z0-9_-]*$/;
export const MASTER_KEY_MAX_LENGTH = 64;
export const MASTER_KEY_RULE = 'a lowercase letter followed by lowercase letters, digits, underscores or hyphens, at most 64 characters';

export const masterKeySchema = z
  .string()
  .max(MASTER_KEY_MAX_LENGTH)
  .regex(MASTER_KEY_PATTERN, { error: `must be ${MASTER_KEY_RULE}` });

export function isMasterKey(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MASTER_KEY_MAX_LENGTH && MASTER_KEY_PATTERN.test(value);
}
