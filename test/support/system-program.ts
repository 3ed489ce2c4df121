import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Programs from the operating system that some tests use as real peers (xmllint for sitemaps, Chromium for
 * the hosted contact page). The README lists them first among the prerequisites. A test that needs one that
 * is missing is reported pending, with the command that installs it in its title, so that `npm test` on a
 * machine without them says what to do instead of failing. Under CI (CI=true) a missing program fails the
 * test: CI installs them (.ci/run), so there a missing one is a broken machine, not a choice.
 */
export interface SystemProgram {
  /** What it is, for messages. */
  name: string;
  /** The executable looked up on PATH, or an absolute path. */
  executable: string;
  /** The exact command that installs it on Debian. */
  install: string;
  /** Finds it another way than by `executable` on PATH; returns what to run, or undefined. */
  find?: () => string | undefined;
}

export const xmllint: SystemProgram = { name: 'xmllint', executable: 'xmllint', install: 'sudo apt-get install -y libxml2-utils' };

/** curl, which the compose file's health checks run (as the images do): their commands run here against stand-ins. */
export const curl: SystemProgram = { name: 'curl', executable: 'curl', install: 'sudo apt-get install -y curl' };

/** Debian's chromium, driven by playwright-core; CHROMIUM_PATH names another build. */
export const chromium: SystemProgram = { name: 'Chromium', executable: process.env['CHROMIUM_PATH'] || 'chromium', install: 'sudo apt-get install -y chromium' };

/** OpenSSL, the auditor's independent check of an export's signature (docs/audit.md). */
export const openssl: SystemProgram = { name: 'OpenSSL', executable: 'openssl', install: 'sudo apt-get install -y openssl' };

/** jq, with which docs/audit.md reads the key list and the JWS for openssl. */
export const jq: SystemProgram = { name: 'jq', executable: 'jq', install: 'sudo apt-get install -y jq' };

/**
 * Docker Compose, to validate docker-compose.yml (no Docker engine needed): the v2 plugin (`docker compose`)
 * when it answers, else Debian's docker-compose (v1). `locate` gives the command line, space-separated.
 */
export const dockerCompose: SystemProgram = {
  name: 'Docker Compose',
  executable: 'docker-compose',
  install: 'sudo apt-get install -y --no-install-recommends docker-compose',
  find: () => {
    if (onPath('docker') && spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return 'docker compose';
    return onPath('docker-compose');
  },
};

/** The program's absolute path (or command line), or undefined when it is not installed. */
export function locate(program: SystemProgram): string | undefined {
  return program.find ? program.find() : onPath(program.executable);
}

function onPath(executable: string): string | undefined {
  const candidates = path.isAbsolute(executable)
    ? [executable]
    : (process.env['PATH'] ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, executable));
  return candidates.find((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

const inCi = (): boolean => /^(1|true)$/i.test(process.env['CI'] ?? '');

function missingReason(program: SystemProgram): string {
  return `${program.name} is not installed; install it with: ${program.install}`;
}

/** The test's or suite's title, with the pending reason added when the program is missing (outside CI). */
export function needing(program: SystemProgram, title: string): string {
  return locate(program) || inCi() ? title : `${title} [pending: ${missingReason(program)}]`;
}

/**
 * Call first in a test or a `before` hook (with mocha's `this`): the program's path when installed;
 * otherwise the test (or the whole suite, from a hook) is skipped, or, under CI=true, fails.
 */
export function requireProgram(context: Mocha.Context, program: SystemProgram): string {
  const found = locate(program);
  if (found) return found;
  if (inCi()) throw new Error(`${missingReason(program)} (CI=true: a missing test peer fails the run)`);
  context.skip();
}
