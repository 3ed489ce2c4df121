import type { Middleware } from 'koa';
import { validationError } from '../errors/error-factory.ts';

/** Segments without '%', a backslash or a control character, none empty, '.' or '..': canonical as they are. */
const PLAIN_PATH = /^(?:\/(?!\.\.?(?:\/|$))[^/%\\\u0000-\u001f\u007f]+)+$/;

/**
 * Why a request path is not in the one form routes are written in, or null when it is. Routing and
 * authentication then see every request the same way: a path that a proxy, a router or a file server could
 * read as another path (dot segments, empty segments, encoded slashes or backslashes, malformed percent
 * escapes) is refused before any of them looks at it, instead of being normalised differently by each.
 */
export function nonCanonicalPathReason(path: string): string | null {
  // Most paths: non-empty segments with nothing to decode, none of them a dot segment. Checked in one step;
  // anything else gets the checks below, which name the problem.
  if (PLAIN_PATH.test(path)) return null;
  if (!path.startsWith('/')) return 'it does not start with /';
  if (path.includes('//')) return 'it has an empty segment (//)';
  if (path.includes('\\')) return 'it has a backslash';
  if (/%(?:2f|5c)/i.test(path)) return 'it has an encoded slash or backslash (%2F, %5C)';
  if (/%(?![0-9a-f]{2})/i.test(path)) return 'it has a malformed percent escape';
  for (const segment of path.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return 'it has a percent escape that is not UTF-8';
    }
    if (decoded === '.' || decoded === '..') return 'it has a dot segment (/./ or /../)';
    if (/[\u0000-\u001f\u007f]/.test(decoded)) return 'it has an encoded control character';
  }
  return null;
}

/**
 * Mount before every router: a request whose path is not canonical (see nonCanonicalPathReason) is answered
 * 400 VALIDATION_ERROR naming the problem, and reaches no route.
 */
export function canonicalPath(): Middleware {
  return async function canonicalPathMiddleware(ctx, next) {
    const reason = nonCanonicalPathReason(ctx.path);
    if (reason !== null) {
      throw validationError(`The request path is not in canonical form: ${reason}.`, {
        hint: 'Send the path as documented, without dot segments, empty segments or encoded slashes.',
      });
    }
    await next();
  };
}
