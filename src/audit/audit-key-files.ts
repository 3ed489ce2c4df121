/**
 * Where the audit key's files may live, checked when the ring opens: a secret (the key file, a PKCS#11 PIN
 * file) outside DATA_DIR, readable by no other user and writable by no one the service runs as; the key
 * chain (public, its integrity its own signatures) outside DATA_DIR. Each refusal is an AuditKeySetupError
 * whose message names the setting, the file, what is wrong and the command that fixes it.
 *
 * Why outside DATA_DIR: whoever can write or copy the data folder (an administrator of the host, a backup
 * operator, a restore, a compromised process writing there) would otherwise hold the key beside the log it
 * vouches for, and could rewrite the history and sign it again.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The audit key cannot be used as configured; the message says what to change. */
export class AuditKeySetupError extends Error {
  override name = 'AuditKeySetupError';
}

export interface FileCheck {
  /** The setting that names the file, for messages. */
  setting: string;
  file: string;
  dataDir: string;
}

/**
 * Refuses a secret file that is missing, not a regular file, inside DATA_DIR, open to other users, or
 * writable by the service's user or by its group. Answers warnings about what the checks cannot promise
 * (a service running as root reads and changes any file, whatever its mode).
 */
export function checkSecretFile(check: FileCheck): string[] {
  const { setting, file } = check;
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new AuditKeySetupError(code === 'ENOENT' ? `${setting}=${file}: no such file` : `${setting}=${file}: cannot read it (${code ?? (error as Error).message})`);
  }
  if (!stat.isFile()) throw new AuditKeySetupError(`${setting}=${file}: not a regular file`);
  refuseInsideDataDir(check);
  const mode = stat.mode & 0o777;
  const shown = `mode ${mode.toString(8).padStart(4, '0')}`;
  if ((mode & 0o007) !== 0) {
    throw new AuditKeySetupError(`${setting}=${file} is open to other users (${shown}): it is a secret; run chmod o-rwx ${file}`);
  }
  const uid = process.geteuid?.() ?? -1;
  const groups = new Set([process.getegid?.() ?? -1, ...(process.getgroups?.() ?? [])]);
  const fix = `make it read-only to the service: chown root:<the service's group> ${file} && chmod 0440 ${file}`;
  if (stat.uid === uid && (mode & 0o200) !== 0) {
    throw new AuditKeySetupError(`${setting}=${file} is writable by the service's user (uid ${uid}, ${shown}): the service must not be able to change its key; ${fix}`);
  }
  if ((mode & 0o020) !== 0) {
    const who = groups.has(stat.gid) ? `the service's group (gid ${stat.gid})` : `its group (gid ${stat.gid})`;
    throw new AuditKeySetupError(`${setting}=${file} is writable by ${who} (${shown}): ${fix}`);
  }
  return uid === 0
    ? [`the service runs as root, which can read and change ${file} whatever its mode: run it as a user of its own (docs/operations.md "Running in production") for the key file's protection to hold`]
    : [];
}

/** Refuses a file whose real path is DATA_DIR or inside it (symbolic links followed). */
export function refuseInsideDataDir(check: FileCheck): void {
  const file = realPath(check.file);
  const dataDir = realPath(check.dataDir);
  const relative = path.relative(dataDir, file);
  if (relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative))) {
    throw new AuditKeySetupError(
      `${check.setting}=${check.file} is inside DATA_DIR (${check.dataDir}): whoever can write or copy the data folder would hold it beside the log it vouches for; move it out (for example to /etc/annals/) and set ${check.setting} to the new path`,
    );
  }
}

/** The real path of a file, or of its nearest existing parent joined with the rest (for files not made yet). */
function realPath(file: string): string {
  const absolute = path.resolve(file);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      return path.join(fs.realpathSync(current), ...missing.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return absolute;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}
