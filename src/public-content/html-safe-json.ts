/**
 * JSON text that can be pasted into HTML as it is, above all into `<script type="application/ld+json">`
 * (JSON-LD's intended use) or a page's inline data: `<`, `>` and `&` are written as `\u003c`, `\u003e` and
 * `\u0026`, so the text can never hold `</script>`, `<!--` or a character reference, and U+2028 and U+2029 as
 * `\u2028` and `\u2029` (line terminators to JavaScript before ES2019). Only characters inside strings can be
 * any of these, and there the escapes are standard JSON: the text parses back to exactly the same values.
 */
export function htmlSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
