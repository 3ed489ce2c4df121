/** The longest link target accepted, as for url fields. */
export const HREF_MAX_LENGTH = 2048;

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const SAFE_SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);

/**
 * Whether a link target is one a page can follow without running anything: an http or https address with a
 * host, a mailto: or tel: address, or a relative reference (a path, `/path`, `?query` or `#anchor`), at most
 * 2048 characters. Every other scheme (javascript:, data:, vbscript:, file:, ...) is refused, and so is any
 * whitespace or control character: browsers drop tabs and line breaks inside URLs and leading spaces and
 * controls before them, so `java\tscript:` or ` javascript:` would run as javascript:. A protocol-relative
 * `//host` reference is refused too: it is not relative to the site, and an address should say its scheme.
 */
export function isSafeHref(href: string): boolean {
  if (href.length === 0 || href.length > HREF_MAX_LENGTH) return false;
  // C0 controls, space, DEL, and the C1 controls and other spaces a browser might trim.
  if (/[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200f\u2028\u2029\u202f\u205f\u3000\ufeff]/.test(href)) return false;
  const scheme = SCHEME.exec(href)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    // Relative. Browsers read a backslash as a slash, so `/\host` would be a network-path reference too.
    return !href.startsWith('//') && !href.includes('\\');
  }
  if (!SAFE_SCHEMES.has(scheme)) return false;
  if (scheme === 'http' || scheme === 'https') return /^https?:\/\//i.test(href) && !href.includes('\\') && hasHost(href);
  return href.length > scheme.length + 1;
}

function hasHost(href: string): boolean {
  try {
    return new URL(href).hostname !== '';
  } catch {
    return false;
  }
}
