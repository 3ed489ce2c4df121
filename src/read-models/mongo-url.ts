/** What a MongoDB URL names, read without the driver (the configuration reads it before any store is opened). */

/** The database the read models use when the URL names none. */
export const DEFAULT_DATABASE = 'annals';

/**
 * The database named in a `mongodb://` or `mongodb+srv://` URL's path, or null when it names none.
 */
export function databaseFromUrl(url: string): string | null {
  const match = /^mongodb(?:\+srv)?:\/\/([^?#]*)/i.exec(url.trim());
  if (!match) return null;
  const beforeQuery = match[1]!;
  const authorityEnd = beforeQuery.indexOf('/');
  if (authorityEnd < 0) return null;
  const path = beforeQuery.slice(authorityEnd + 1);
  if (path === '') return null;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The database the read models of `url` are in: the one its path names, else DEFAULT_DATABASE. */
export function readModelsDatabaseOf(url: string): string {
  return databaseFromUrl(url) ?? DEFAULT_DATABASE;
}

/** The key store's default database beside the read models of `url` (see the MongoDB key store). */
export function defaultKeysDatabaseOf(url: string): string {
  return `${readModelsDatabaseOf(url)}_keys`;
}

/** MongoDB's rule for database names (Unix and Windows deployments alike): 1 to 63 bytes, none of / \\ . space " $ * < > : | ? NUL. */
export function isValidDatabaseName(name: string): boolean {
  return /^[^/\\. "$*<>:|?\0]+$/.test(name) && Buffer.byteLength(name) <= 63;
}
