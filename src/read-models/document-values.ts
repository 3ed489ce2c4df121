/**
 * Reading and ordering document values as the read-model stores do, for code that must agree with them in
 * memory (a projection's pending writes, the counts of deep pages).
 */

/** The value at a dotted path through nested objects; undefined when a step is missing or not an object (an array's elements are not reached: `$.a.0` names a key). */
export function valueAt(doc: Readonly<Record<string, unknown>>, path: string): unknown {
  let current: unknown = doc;
  for (const step of path.split('.')) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = Object.hasOwn(current, step) ? (current as Record<string, unknown>)[step] : undefined;
  }
  return current;
}

/** Code point order (the order of UTF-8 bytes, as the stores sort ids and text), not UTF-16 code unit order. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (D800–DFFF, astral code points) sort after E000–FFFF.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/** A filter's scalar as SQLite binds it to compare with json_extract: a boolean as 1 or 0 (how JSON true and false read back). */
export function sqlParameter(value: string | number | boolean): string | number {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}
