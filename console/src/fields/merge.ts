/**
 * Field-level three-way merge after a stale-revision conflict. A field (or, for localized fields, a locale's
 * value) only the user changed since `base` keeps the user's value; one only they changed takes theirs. Where
 * both changed the same value differently (a clash), the user's value wins unless its id (see `clashId`) is in
 * `takeTheirs`: the editor names each clash and lets the user choose.
 */
export function mergeFieldValues(base: Record<string, unknown>, mine: Record<string, unknown>, theirs: Record<string, unknown>, takeTheirs: ReadonlySet<string> = new Set()): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...theirs };
  for (const key of changedKeys(base, mine)) {
    const b = base[key];
    const m = mine[key];
    if (isLocaleMap(b) && isLocaleMap(m) && isLocaleMap(theirs[key])) {
      const perLocale: Record<string, unknown> = { ...(theirs[key] as Record<string, unknown>) };
      for (const locale of changedKeys(b, m)) {
        if (takeTheirs.has(clashId(key, locale))) continue;
        if (m[locale] === undefined) delete perLocale[locale];
        else perLocale[locale] = m[locale];
      }
      merged[key] = perLocale;
    } else if (takeTheirs.has(clashId(key))) continue;
    else if (m === undefined) delete merged[key];
    else merged[key] = m;
  }
  return merged;
}

/** One value both sides changed since `base`, to different values. */
export type FieldClash = { id: string; key: string; locale?: string; mine: unknown; theirs: unknown };

/** The values (a field, or a localized field's locale) both the user and the other save changed, differently. */
export function fieldClashes(base: Record<string, unknown>, mine: Record<string, unknown>, theirs: Record<string, unknown>): FieldClash[] {
  const clashes: FieldClash[] = [];
  for (const key of changedKeys(base, mine)) {
    const b = base[key];
    const m = mine[key];
    const t = theirs[key];
    if (isLocaleMap(b) && isLocaleMap(m) && isLocaleMap(t)) {
      for (const locale of changedKeys(b, m)) {
        if (!same(b[locale], t[locale]) && !same(m[locale], t[locale])) clashes.push({ id: clashId(key, locale), key, locale, mine: m[locale], theirs: t[locale] });
      }
    } else if (!same(b, t) && !same(m, t)) clashes.push({ id: clashId(key), key, mine: m, theirs: t });
  }
  return clashes;
}

export function clashId(key: string, locale?: string): string {
  return locale === undefined ? key : `${key}\u0000${locale}`;
}

function changedKeys(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((key) => !same(before[key], after[key]));
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function isLocaleMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { type?: unknown }).type !== 'doc' && !('from' in value) && !('assetId' in value);
}
