import path from 'node:path';
import { ConfigError, loadConfig, type MediaConfig } from '../config/config.ts';

/** Where blobs live, as the configuration names it: a local folder, or an S3 bucket. */
export type BlobLocation = MediaConfig['blobs'];

/** A location an operator wrote is not one. */
export class BlobLocationError extends Error {
  override name = 'BlobLocationError';
}

const S3_PARAMETERS: Record<string, string> = { endpoint: 'S3_ENDPOINT', region: 'S3_REGION', 'path-style': 'S3_FORCE_PATH_STYLE' };

/**
 * An operator's name for a blob store (`annals media copy --from/--to`, `log import --media-from`):
 *
 * - a folder path (or a file: URL), holding blobs as DATA_DIR/media does (`<projectId>/<assetId>`);
 * - `s3://BUCKET[?endpoint=URL&region=REGION&path-style=true]`, with credentials from the environment the
 *   service reads them from (S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or the AWS default chain), never
 *   from the URL, which would show them in `ps` and shell histories.
 *
 * The S3 settings are checked by the service's own configuration rules, so a location the command accepts
 * is one the service would accept as S3_BUCKET, S3_ENDPOINT, S3_REGION and S3_FORCE_PATH_STYLE.
 */
export function parseBlobLocation(value: string, env: NodeJS.ProcessEnv = process.env): BlobLocation {
  if (value.trim() === '') throw new BlobLocationError('an empty location: give a folder path or s3://bucket');
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return { kind: 'local-folder', dir: path.resolve(value) };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new BlobLocationError(`${JSON.stringify(value)} is not a URL`);
  }
  if (url.protocol === 'file:') return { kind: 'local-folder', dir: path.resolve(decodeURIComponent(url.pathname)) };
  if (url.protocol !== 's3:') throw new BlobLocationError(`${url.protocol}// locations are not supported: give a folder path or s3://bucket`);
  if (url.username || url.password) throw new BlobLocationError('credentials do not go in the location (they would show in ps and shell history): set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY');
  if (url.pathname !== '' && url.pathname !== '/') throw new BlobLocationError(`s3://${url.hostname}${url.pathname}: blobs are kept at the bucket's top level, as the service keeps them; give s3://${url.hostname}`);
  const settings: NodeJS.ProcessEnv = { S3_BUCKET: url.hostname, S3_ACCESS_KEY_ID: env['S3_ACCESS_KEY_ID'], S3_SECRET_ACCESS_KEY: env['S3_SECRET_ACCESS_KEY'] };
  for (const [name, given] of url.searchParams) {
    const setting = S3_PARAMETERS[name];
    if (!setting) throw new BlobLocationError(`unknown parameter ${JSON.stringify(name)} in ${redactedLocation(value)}; allowed: ${Object.keys(S3_PARAMETERS).join(', ')}`);
    settings[setting] = given;
  }
  try {
    return loadConfig(settings).media.blobs;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    let message = error.message;
    for (const [name, setting] of [['bucket', 'S3_BUCKET'], ...Object.entries(S3_PARAMETERS)]) message = message.replaceAll(`${setting}=`, `${name}=`);
    throw new BlobLocationError(message);
  }
}

/** The location for messages and JSON results: never credentials. */
export function describeBlobLocation(location: BlobLocation): string {
  if (location.kind === 'local-folder') return location.dir;
  const parameters = new URLSearchParams({ ...(location.endpoint ? { endpoint: location.endpoint } : {}), region: location.region, ...(location.forcePathStyle ? { 'path-style': 'true' } : {}) });
  return `s3://${location.bucket}?${parameters.toString().replaceAll('%3A', ':').replaceAll('%2F', '/')}`;
}

/** Whether two locations name the same store (copying a store onto itself is refused). */
export function sameBlobLocation(a: BlobLocation, b: BlobLocation): boolean {
  if (a.kind === 'local-folder') return b.kind === 'local-folder' && path.resolve(a.dir) === path.resolve(b.dir);
  return b.kind === 's3' && a.bucket === b.bucket && (a.endpoint ?? '') === (b.endpoint ?? '');
}

function redactedLocation(value: string): string {
  return value.replace(/\/\/[^@/]*@/, '//');
}
