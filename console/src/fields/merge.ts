/**
 * Field-level three-way merge after a stale-revision conflict: a field (or, for localized fields, a locale's
 * value) the user changed since `base` keeps the user's value; everything else takes `theirs`.
 */
export function mergeFieldValues(base: Record<string, unknown>, mine: Record<string, unknown>, theirs: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...theirs };
  for (const key of new Set([...Object.keys(base), ...Object.keys(mine)])) {
    const b = base[key];
    const m = mine[key];
    if (same(b, m)) continue;
    if (isLocaleMap(b) && isLocaleMap(m) && isLocaleMap(theirs[key])) {
      const perLocale: Record<string, unknown> = { ...(theirs[key] as Record<string, unknown>) };
      for (const locale of new Set([...Object.keys(b), ...Object.keys(m)])) {
        if (same(b[locale], m[locale])) continue;
        if (m[locale] === undefined) delete perLocale[locale];
        else perLocale[locale] = m[locale];
      }
      merged[key] = perLocale;
    } else if (m === undefined) delete merged[key];
    else merged[key] = m;
  }
  return merged;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function isLocaleMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { type?: unknown }).type !== 'doc' && !('from' in value) && !('assetId' in value);
}
