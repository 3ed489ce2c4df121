import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { StartedTestContainer } from 'testcontainers';
import { probeContainerRuntime } from './container-runtime.ts';
import { goPeerPending, locateGoPeer, missingPeerReason } from './go-peers.ts';
import { freePort } from './ports.ts';

/**
 * The MinIO server the S3 suites run against, in this order of preference: MINIO_URL (an existing server,
 * with the credentials minioadmin/minioadmin unless MINIO_ACCESS_KEY and MINIO_SECRET_KEY say otherwise), a
 * `minio/minio` container where a container runtime answers, MinIO built from Go sources by
 * scripts/peers/build.sh (started once per test process on a free loopback port, stopped at its exit), or
 * none: pending, with the reason and the command that builds it.
 */
export interface MinioServer {
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

type Target = { kind: 'existing'; url: string } | { kind: 'container' } | { kind: 'binary'; binary: string } | { kind: 'pending'; reason: string };

const ROOT = { accessKeyId: 'minioadmin', secretAccessKey: 'minioadmin' };
let targetProbe: Promise<Target> | undefined;

function minioTarget(): Promise<Target> {
  targetProbe ??= (async (): Promise<Target> => {
    const url = process.env['MINIO_URL'];
    if (url) return { kind: 'existing', url };
    const noRuntime = await probeContainerRuntime();
    if (!noRuntime) return { kind: 'container' };
    const binary = locateGoPeer('minio');
    if (binary) return { kind: 'binary', binary };
    if (!goPeerPending('minio')) return { kind: 'binary', binary: '' };
    return { kind: 'pending', reason: `${noRuntime}; ${missingPeerReason('minio')}; or set MINIO_URL to use an existing server` };
  })();
  return targetProbe;
}

/** The pending reason when no MinIO can run, else undefined. */
export async function minioServerPending(): Promise<string | undefined> {
  const target = await minioTarget();
  return target.kind === 'pending' ? target.reason : undefined;
}

let serverStart: Promise<MinioServer> | undefined;
let container: StartedTestContainer | undefined;
let child: ChildProcess | undefined;
let dataDir: string | undefined;

/** The server, started on first use and shared by every suite of the test process. */
export function minioServer(): Promise<MinioServer> {
  serverStart ??= (async (): Promise<MinioServer> => {
    const target = await minioTarget();
    switch (target.kind) {
      case 'pending':
        throw new Error(`no MinIO server: ${target.reason}`);
      case 'existing':
        return { endpoint: target.url, credentials: { accessKeyId: process.env['MINIO_ACCESS_KEY'] || ROOT.accessKeyId, secretAccessKey: process.env['MINIO_SECRET_KEY'] || ROOT.secretAccessKey } };
      case 'container': {
        const { GenericContainer, Wait } = await import('testcontainers');
        container = await new GenericContainer('minio/minio:latest')
          .withCommand(['server', '/data'])
          .withEnvironment({ MINIO_ROOT_USER: ROOT.accessKeyId, MINIO_ROOT_PASSWORD: ROOT.secretAccessKey })
          .withExposedPorts(9000)
          .withWaitStrategy(Wait.forHttp('/minio/health/ready', 9000))
          .withStartupTimeout(120_000)
          .start();
        return { endpoint: `http://${container.getHost()}:${container.getMappedPort(9000)}`, credentials: ROOT };
      }
      case 'binary':
        if (!target.binary) throw new Error(`${missingPeerReason('minio')} (CI=true: a missing test peer fails the run)`);
        return { endpoint: await startMinio(target.binary), credentials: ROOT };
    }
  })();
  return serverStart;
}

/** Stops what minioServer() started; an existing server is left alone. */
export async function stopMinioServer(): Promise<void> {
  await container?.stop();
  container = undefined;
  stopMinio();
  serverStart = undefined;
}

async function startMinio(binary: string): Promise<string> {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-minio-'));
  const [port, consolePort] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${port}`;
  const started = spawn(binary, ['server', dataDir, '--quiet', '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, MINIO_ROOT_USER: ROOT.accessKeyId, MINIO_ROOT_PASSWORD: ROOT.secretAccessKey, MINIO_BROWSER: 'off', MINIO_UPDATE: 'off', CI: 'true' },
  });
  child = started;
  let stderr = '';
  started.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  process.once('exit', stopMinio);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (started.exitCode !== null) throw new Error(`MinIO exited with ${started.exitCode} at start: ${stderr}`);
    let answer: string;
    try {
      const response = await fetch(`${endpoint}/minio/health/ready`, { signal: AbortSignal.timeout(1_000) });
      if (response.ok) return endpoint;
      answer = `HTTP ${response.status}`;
    } catch (error) {
      answer = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`MinIO was not ready on ${endpoint} within 60 s (${answer}): ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function stopMinio(): void {
  child?.kill('SIGKILL');
  child = undefined;
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
}
