import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import type { StartedTestContainer } from 'testcontainers';
import { probeContainerRuntime } from './container-runtime.ts';
import { goPeerPending, locateGoPeer, missingPeerReason } from './go-peers.ts';
import { freePort } from './ports.ts';

/**
 * The MongoDB server the MongoDB suites run against, in this order of preference:
 * 1. MONGODB_URL: an existing server (a real MongoDB, say a replica set);
 * 2. a `mongo:7` container, where a container runtime answers (testcontainers);
 * 3. FerretDB v1 (SQLite backend), built from Go sources by scripts/peers/build.sh: a MongoDB wire-protocol
 *    server, started once per test process on a free loopback port;
 * 4. none: every test is pending, with the reason and the command that builds FerretDB.
 *
 * FerretDB is not MongoDB. A test that needs what it lacks asks `lacks(feature)` and stays pending for
 * FerretDB only, naming the feature; production code is never bent to its gaps.
 */
export type MongoFlavour = 'mongodb' | 'ferretdb';

/** What FerretDB v1 lacks that some tests need, named as the tests' pending reasons say it. */
export type FerretDbGap =
  | 'text indexes ($text)'
  | 'transactions'
  | 'replica sets (change streams)'
  /** Its explain answers SQLite's plan: no keys or documents examined. */
  | 'explain executionStats'
  /** Pushdown of filters other than a lone `_id` equality: each position-guarded write scans its collection. */
  | 'writes filtered by an index (it scans the collection for each position-guarded write)'
  /** Its update finds the matching documents, then writes them: two updates of one document may both match. */
  | 'atomic conditional updates (compare-and-set of one document)';

const FERRETDB_GAPS: ReadonlySet<string> = new Set<FerretDbGap>([
  'text indexes ($text)',
  'transactions',
  'replica sets (change streams)',
  'explain executionStats',
  'writes filtered by an index (it scans the collection for each position-guarded write)',
  'atomic conditional updates (compare-and-set of one document)',
]);

export interface MongoServer {
  url: string;
  flavour: MongoFlavour;
}

export type MongoServerTarget =
  | { kind: 'existing'; url: string }
  | { kind: 'container' }
  | { kind: 'ferretdb'; binary: string }
  | { kind: 'pending'; reason: string };

let targetProbe: Promise<MongoServerTarget> | undefined;

/** Which server the suites will use, decided once per process, before any is started. */
export function mongoServerTarget(): Promise<MongoServerTarget> {
  targetProbe ??= (async (): Promise<MongoServerTarget> => {
    const url = process.env['MONGODB_URL'];
    if (url) return { kind: 'existing', url };
    const noRuntime = await probeContainerRuntime();
    if (!noRuntime) return { kind: 'container' };
    const binary = locateGoPeer('ferretdb');
    if (binary) return { kind: 'ferretdb', binary };
    // Under CI=true a missing FerretDB is a broken machine: the suite runs and fails at start.
    if (!goPeerPending('ferretdb')) return { kind: 'ferretdb', binary: '' };
    return { kind: 'pending', reason: `${noRuntime}; ${missingPeerReason('ferretdb')}; or set MONGODB_URL to use an existing server` };
  })();
  return targetProbe;
}

/** The pending reason when no server can run, else undefined. */
export async function mongoServerPending(): Promise<string | undefined> {
  const target = await mongoServerTarget();
  return target.kind === 'pending' ? target.reason : undefined;
}

let serverStart: Promise<MongoServer> | undefined;
let container: StartedTestContainer | undefined;
let ferret: ChildProcess | undefined;
let ferretDir: string | undefined;

/** The server, started on first use and shared by every suite of the test process (stopped at its exit). */
export function mongoServer(): Promise<MongoServer> {
  serverStart ??= (async (): Promise<MongoServer> => {
    const target = await mongoServerTarget();
    switch (target.kind) {
      case 'pending':
        throw new Error(`no MongoDB server: ${target.reason}`);
      case 'existing':
        return { url: target.url, flavour: (await isFerretDb(target.url)) ? 'ferretdb' : 'mongodb' };
      case 'container': {
        const { GenericContainer, Wait } = await import('testcontainers');
        container = await new GenericContainer('mongo:7').withExposedPorts(27017).withWaitStrategy(Wait.forLogMessage(/Waiting for connections/)).withStartupTimeout(120_000).start();
        return { url: `mongodb://${container.getHost()}:${container.getMappedPort(27017)}/?directConnection=true`, flavour: 'mongodb' };
      }
      case 'ferretdb':
        if (!target.binary) throw new Error(`${missingPeerReason('ferretdb')} (CI=true: a missing test peer fails the run)`);
        return { url: await startFerretDb(target.binary), flavour: 'ferretdb' };
    }
  })();
  return serverStart;
}

/** Stops what mongoServer() started (a container or FerretDB); an existing server is left alone. */
export async function stopMongoServer(): Promise<void> {
  await container?.stop();
  container = undefined;
  stopFerretDb();
  serverStart = undefined;
}

/** The reason a test cannot run on this server, or undefined: FerretDB lacks `gap`, MongoDB has it. */
export function pendingOn(server: MongoServer, gap: FerretDbGap): string | undefined {
  return server.flavour === 'ferretdb' ? `FerretDB v1 lacks ${gap}` : undefined;
}

/**
 * As pendingOn, before any server is started: from the server the suites will use (mongoServerTarget), so that
 * a suite can put the reason in a test's title when it declares it.
 */
export async function pendingOnTarget(gap: FerretDbGap): Promise<string | undefined> {
  return (await mongoServerTarget()).kind === 'ferretdb' ? `FerretDB v1 lacks ${gap}` : undefined;
}

/** As pendingOn, for a feature named by a conformance suite (AdapterHarness.lacks): undefined for the features FerretDB has. */
export function lacksOn(server: MongoServer, feature: string): string | undefined {
  return FERRETDB_GAPS.has(feature) ? pendingOn(server, feature as FerretDbGap) : undefined;
}

async function isFerretDb(url: string): Promise<boolean> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5_000 });
  try {
    const info = await client.db('admin').command({ buildInfo: 1 });
    return 'ferretdbVersion' in info || 'ferretdb' in info;
  } finally {
    await client.close();
  }
}

async function startFerretDb(binary: string): Promise<string> {
  ferretDir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-ferretdb-'));
  const port = await freePort();
  const url = `mongodb://127.0.0.1:${port}/?directConnection=true`;
  const child = spawn(
    binary,
    [
      '--handler=sqlite',
      `--sqlite-url=file:${ferretDir}/`,
      `--state-dir=${ferretDir}`,
      `--listen-addr=127.0.0.1:${port}`,
      '--debug-addr=-',
      '--telemetry=disable',
      '--log-level=error',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  ferret = child;
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  process.once('exit', stopFerretDb);
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`FerretDB exited with ${child.exitCode} at start: ${stderr}`);
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 500 });
    let failure: string;
    try {
      await client.db('admin').command({ ping: 1 });
      return url;
    } catch (error) {
      failure = (error as Error).message;
    } finally {
      await client.close();
    }
    if (Date.now() > deadline) throw new Error(`FerretDB did not answer on ${url} within 30 s (${failure}): ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function stopFerretDb(): void {
  ferret?.kill('SIGKILL');
  ferret = undefined;
  if (ferretDir) fs.rmSync(ferretDir, { recursive: true, force: true });
  ferretDir = undefined;
}
