import { domainToASCII } from 'node:url';
import { invalid } from '../domain-error.ts';

/**
 * Checks and canonical forms for the values tenants, projects and users carry. Each throws
 * VALIDATION_ERROR naming the field and the rule, and returns the form that is stored.
 */

export const NAME_MAX_LENGTH = 200;
export const MAX_CONTENT_LOCALES = 30;
export const MAX_CUSTOM_DOMAINS = 20;
export const URL_MAX_LENGTH = 2000;
export const LOGIN_MESSAGE_MAX_LENGTH = 500;
export const SITE_DESCRIPTION_MAX_LENGTH = 1000;
export const EMAIL_MAX_LENGTH = 254;

/** A display name: trimmed, 1 to 200 characters, no control characters. */
export function displayName(value: string, field: string): string {
  const trimmed = value.trim();
  if (trimmed.length === 0) throw invalid(`${field} must not be empty`);
  if (trimmed.length > NAME_MAX_LENGTH) throw invalid(`${field} must be at most ${NAME_MAX_LENGTH} characters`);
  if (/\p{Cc}/u.test(trimmed)) throw invalid(`${field} must not contain control characters`);
  return trimmed;
}

const PROJECT_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A project slug: lowercase letters, digits and hyphens, 1 to 63 characters, no hyphen at either end. */
export function projectSlug(value: string): string {
  if (!PROJECT_SLUG.test(value)) {
    throw invalid('slug must be 1 to 63 lowercase letters, digits or hyphens, and must not start or end with a hyphen', 'For example: my-site');
  }
  return value;
}

/**
 * A BCP 47 language tag in canonical case (en-us -> en-US, ZH-hant-tw -> zh-Hant-TW). The primary
 * language subtag must be an ISO 639 code of 2 or 3 letters, so 'english' or 'x-private' are refused,
 * and extensions (en-u-ca-gregory) are refused too.
 */
export function localeTag(value: string, field: string): string {
  let canonical: string;
  try {
    const [tag] = Intl.getCanonicalLocales(value.trim());
    if (!tag) throw new RangeError('empty');
    canonical = tag;
  } catch {
    throw invalid(`${field}: ${JSON.stringify(value)} is not a BCP 47 language tag`, 'For example: en, ja, pt-BR, zh-Hant');
  }
  if (!/^[a-z]{2,3}(?:-|$)/.test(canonical)) {
    throw invalid(`${field}: ${JSON.stringify(value)} must start with a 2- or 3-letter ISO 639 language code`, 'For example: en, ja, pt-BR, zh-Hant');
  }
  // Language, script, region and variants only (no -u- or -x- extensions): the shape content locale
  // keys take everywhere (src/domain/content/form-set/locale-code.ts).
  if (canonical.length > 35 || !/^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/.test(canonical)) {
    throw invalid(`${field}: ${JSON.stringify(value)} must be a plain language tag without extensions`, 'For example: en, ja, pt-BR, zh-Hant');
  }
  return canonical;
}

/** A non-empty list of distinct locale tags, in the order given. */
export function localeList(values: readonly string[]): string[] {
  if (values.length === 0) throw invalid('locales must name at least one locale');
  if (values.length > MAX_CONTENT_LOCALES) throw invalid(`locales may name at most ${MAX_CONTENT_LOCALES} locales`);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const value of values) {
    const tag = localeTag(value, 'locales');
    if (seen.has(tag)) throw invalid(`locales: ${tag} is listed twice`);
    seen.add(tag);
    out.push(tag);
  }
  return out;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A custom domain: a fully qualified host name, lower-cased, internationalised names in their
 * punycode (xn--) form, without scheme, port, path, wildcard or trailing dot. IP addresses and
 * single-label names (localhost) are refused: a custom domain must resolve through public DNS.
 */
export function hostname(value: string, field = 'customDomains'): string {
  const trimmed = value.trim().replace(/\.$/, '');
  const problem = () => invalid(`${field}: ${JSON.stringify(value)} is not a host name`, 'Give the bare host name, for example www.example.com (no https://, port or path)');
  if (trimmed.length === 0 || /[\s/:@*?#\\]/.test(trimmed)) throw problem();
  const ascii = domainToASCII(trimmed.toLowerCase());
  if (!ascii || ascii.length > 253) throw problem();
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) throw problem();
  if (/^\d+$/.test(labels[labels.length - 1]!)) throw problem();
  return ascii;
}

/** A list of distinct host names (the same domain may not be listed twice). */
export function hostnameList(values: readonly string[]): string[] {
  if (values.length > MAX_CUSTOM_DOMAINS) throw invalid(`customDomains may hold at most ${MAX_CUSTOM_DOMAINS} domains`);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const value of values) {
    const host = hostname(value);
    if (seen.has(host)) throw invalid(`customDomains: ${host} is listed twice`);
    seen.add(host);
    out.push(host);
  }
  return out;
}

/**
 * An https URL without credentials, query or fragment. Stored as origin plus path with no trailing
 * slash (https://example.com/blog/ -> https://example.com/blog), so paths can be appended to it.
 */
export function httpsUrl(value: string, field: string, options: { keepQuery?: boolean } = {}): string {
  const trimmed = value.trim();
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw invalid(`${field} must be an absolute https URL`, 'For example: https://www.example.com');
  }
  if (trimmed.length > URL_MAX_LENGTH) throw invalid(`${field} must be at most ${URL_MAX_LENGTH} characters`);
  if (url.protocol !== 'https:') throw invalid(`${field} must use https`, 'For example: https://www.example.com');
  if (url.username || url.password) throw invalid(`${field} must not contain a user name or password`);
  if (url.hash) throw invalid(`${field} must not contain a fragment (#…)`);
  if (options.keepQuery) return url.href;
  if (url.search) throw invalid(`${field} must not contain a query string`);
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/** A CSS hex colour, #rgb or #rrggbb, lower-cased. */
export function hexColour(value: string, field: string): string {
  const trimmed = value.trim().toLowerCase();
  if (!/^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/.test(trimmed)) throw invalid(`${field} must be a hex colour such as #1a73e8`);
  return trimmed;
}

/** Optional free text: trimmed, empty becomes null, bounded. */
export function optionalText(value: string | null, field: string, max: number): string | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (trimmed.length === 0) return null;
  if (trimmed.length > max) throw invalid(`${field} must be at most ${max} characters`);
  return trimmed;
}

// A practical address check (RFC 5322's full grammar admits addresses no mail system delivers to):
// one @, a local part without spaces, a domain that is a host name.
const EMAIL_LOCAL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}$/;

/** An e-mail address, trimmed and lower-cased (the whole address: users sign in case-insensitively). */
export function emailAddress(value: string): string {
  const normalised = value.trim().toLowerCase();
  const at = normalised.lastIndexOf('@');
  const problem = () => invalid('email must be an e-mail address', 'For example: editor@example.com');
  if (at <= 0 || normalised.length > EMAIL_MAX_LENGTH) throw problem();
  const local = normalised.slice(0, at);
  if (!EMAIL_LOCAL.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) throw problem();
  try {
    const domain = hostname(normalised.slice(at + 1), 'email');
    return `${local}@${domain}`;
  } catch {
    throw problem();
  }
}

/**
 * `{ projectId }` when a project is named, else nothing: the optional project an access event carries so that the
 * event log files it under that project (its audit log and exports show it).
 */
export function auditProject(source: { projectId?: string | undefined }): { projectId?: string } {
  return source.projectId === undefined ? {} : { projectId: source.projectId };
}
