import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Test peers built from Go sources by scripts/peers/build.sh (FerretDB, MinIO, the transparency-dev witness,
 * and the project's own Go programs under test/peers/), at the versions pinned in scripts/peers/versions, in a
 * cache folder outside the repository. A suite that needs one that is not built is reported pending, with
 * the command that builds it in its title; under CI=true (.ci/run builds them all) a missing one fails.
 */
export type GoPeerName = 'ferretdb' | 'minio' | 'witness' | 'tlog-verifier';

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const modulePeers: Record<string, string> = { ferretdb: 'FERRETDB_VERSION', minio: 'MINIO_VERSION', witness: 'WITNESS_VERSION' };

export function peersDirectory(): string {
  return process.env['ANNALS_PEERS_DIR'] || path.join(process.env['XDG_CACHE_HOME'] || path.join(os.homedir(), '.cache'), 'annals-peers');
}

function pinnedVersions(): Record<string, string> {
  const text = fs.readFileSync(path.join(repositoryRoot, 'scripts/peers/versions'), 'utf8');
  const versions: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z_]+)=(\S+)\s*$/.exec(line);
    if (match) versions[match[1]!] = match[2]!;
  }
  return versions;
}

/** The digest build.sh names a project's own Go program by: its go.mod, go.sum and .go files, by name. */
function sourceDigest(dir: string): string {
  const hash = createHash('sha256');
  const files = fs.readdirSync(dir).filter((file) => file === 'go.mod' || file === 'go.sum' || file.endsWith('.go')).sort();
  for (const file of files) hash.update(`${file}\n`).update(fs.readFileSync(path.join(dir, file)));
  return hash.digest('hex').slice(0, 16);
}

/** Where build.sh puts the peer's binary (whether or not it is there). */
export function goPeerBinary(name: GoPeerName): string {
  const variable = modulePeers[name];
  if (variable) {
    const version = pinnedVersions()[variable];
    if (!version) throw new Error(`scripts/peers/versions pins no ${variable}`);
    return path.join(peersDirectory(), `${name}-${version}`);
  }
  return path.join(peersDirectory(), `${name}-${sourceDigest(path.join(repositoryRoot, 'test/peers', name))}`);
}

/** The peer's binary when it is built, else undefined. */
export function locateGoPeer(name: GoPeerName): string | undefined {
  const binary = goPeerBinary(name);
  try {
    fs.accessSync(binary, fs.constants.X_OK);
    return binary;
  } catch {
    return undefined;
  }
}

const inCi = (): boolean => /^(1|true)$/i.test(process.env['CI'] ?? '');

/** Why a suite needing the peer cannot run, with the command that fixes it. */
export function missingPeerReason(name: GoPeerName): string {
  return `${name} is not built; build it with: scripts/peers/build.sh ${name} (needs Go and the Go module proxy)`;
}

/**
 * For suites declared at load time: undefined when the peer is built (or under CI=true, where the suite then
 * fails in its hook), else the pending reason.
 */
export function goPeerPending(name: GoPeerName): string | undefined {
  return locateGoPeer(name) || inCi() ? undefined : missingPeerReason(name);
}

/** The title with the pending reason added when the peer is missing (outside CI). */
export function needingPeer(name: GoPeerName, title: string): string {
  const pending = goPeerPending(name);
  return pending ? `${title} [pending: ${pending}]` : title;
}

/**
 * Call first in a test or a `before` hook: the peer's binary when built; otherwise the test (or suite) is
 * skipped, or under CI=true fails.
 */
export function requireGoPeer(context: Mocha.Context, name: GoPeerName): string {
  const found = locateGoPeer(name);
  if (found) return found;
  if (inCi()) throw new Error(`${missingPeerReason(name)} (CI=true: a missing test peer fails the run)`);
  context.skip();
}
