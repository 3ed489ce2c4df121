import { z } from 'zod';

/**
 * A content locale code: a BCP 47 language tag of the common shape (en, ja, pt-BR, zh-Hant). The language
 * part is lowercase, which also keeps a locale code from ever being `type` (the tiptap document key) or a
 * field key with an underscore.
 */
export const LOCALE_CODE_PATTERN = /^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;
export const LOCALE_CODE_RULE = 'a language tag such as en, ja or pt-BR';

export const localeCodeSchema = z.string().regex(LOCALE_CODE_PATTERN, { error: `must be ${LOCALE_CODE_RULE}` });

export function isLocaleCode(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 35 && LOCALE_CODE_PATTERN.test(value);
}

/** The project's content locales (issue 3 item 7): the locales a localized field may hold, and the default one. */
export interface ContentLocales {
  locales: readonly string[];
  defaultLocale: string;
}
