/**
 * The service names each invalid value in its VALIDATION_ERROR message as `fields.<key>[.<locale>][path]:
 * <problem>`, several joined by "; ". These are shown beside their fields: by `key` and `key.locale`.
 */
export type FieldErrors = Map<string, string[]>;

export function fieldErrorsOf(message: string, locales: readonly string[]): FieldErrors {
  const errors: FieldErrors = new Map();
  for (const part of message.split(/;\s+(?=fields\.)/)) {
    const match = /^fields\.([a-z][a-z0-9_]*)((?:\.[A-Za-z0-9-]+)?)([^:]*):\s*(.*)$/s.exec(part.trim());
    if (!match) continue;
    const [, key, maybeLocale, rest, problem] = match as unknown as [string, string, string, string, string];
    const locale = maybeLocale.slice(1);
    const at = locale && locales.includes(locale) ? `${key}.${locale}` : key;
    const where = locale && !locales.includes(locale) ? `${maybeLocale}${rest}` : rest;
    const text = where ? `${where.replace(/^\./, '')}: ${problem}` : problem;
    errors.set(at, [...(errors.get(at) ?? []), text]);
  }
  return errors;
}
