/**
 * Whether an Accept header asks for WebP: it must name image/webp itself with a quality above 0. Wildcards
 * (`image/*`, `*\/*`) do not count, since browsers without WebP support send them too; `image/webp;q=0`
 * means no. Media types and parameter names are case-insensitive (RFC 9110 section 12.5.1).
 */
export function acceptsWebp(accept: string | undefined): boolean {
  if (!accept) return false;
  for (const element of accept.split(',')) {
    const [range, ...params] = element.split(';').map((part) => part.trim());
    if (range?.toLowerCase() !== 'image/webp') continue;
    return quality(params) > 0;
  }
  return false;
}

/** The q parameter (default 1); an invalid one counts as 1, as most servers read it. */
function quality(params: string[]): number {
  for (const param of params) {
    const match = /^q\s*=\s*([0-9.]+)$/i.exec(param);
    if (!match) continue;
    const value = Number(match[1]);
    return Number.isFinite(value) && value >= 0 && value <= 1 ? value : 1;
  }
  return 1;
}
