import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { generate } from 'selfsigned';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/eventually.ts';

/** A certificate for 127.0.0.1 and localhost made now, and the file the dispatcher trusts it through (WEBHOOK_CA_FILE). */
export async function testCertificate(): Promise<{ key: string; cert: string; caFile: string }> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const caFile = path.join(tempDir(), 'receiver-ca.pem');
  fs.writeFileSync(caFile, pems.cert);
  return { key: pems.private, cert: pems.cert, caFile };
}

export interface Received {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  /** The body bytes exactly as they arrived. */
  raw: Buffer;
  json: any;
  /** Checked with @octokit/webhooks-methods' verify over the raw bytes; null when no secret was registered for the path. */
  verified: boolean | null;
  at: number;
}

/** How the receiver answers a request on a path. */
export type Behaviour = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

/**
 * A real HTTPS receiver on 127.0.0.1 with a certificate made at test time. It verifies every signature
 * over the raw body bytes with a third-party verifier (answering 401 when it does not verify) and records
 * what it got; each path can answer differently (a status, or hold the request open).
 */
export class Receiver {
  readonly secrets = new Map<string, string>();
  readonly behaviours = new Map<string, Behaviour>();
  readonly #received: Received[] = [];
  readonly #sockets = new Set<Socket>();
  readonly #hanging = new Set<ServerResponse>();
  #listeners: Array<() => void> = [];

  private constructor(
    private readonly server: https.Server,
    readonly port: number,
    readonly caFile: string,
  ) {}

  static async start(certificate?: { key: string; cert: string; caFile: string }, port = 0): Promise<Receiver> {
    const tlsMaterial = certificate ?? (await testCertificate());
    const { verify } = await import('@octokit/webhooks-methods');
    let receiver!: Receiver;
    const server = https.createServer({ key: tlsMaterial.key, cert: tlsMaterial.cert }, (req, res) => receiver.#handle(req, res, verify));
    server.on('connection', (socket: Socket) => {
      receiver.#sockets.add(socket);
      socket.on('close', () => receiver.#sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    receiver = new Receiver(server, (server.address() as AddressInfo).port, tlsMaterial.caFile);
    return receiver;
  }

  url(urlPath: string): string {
    return `https://127.0.0.1:${this.port}${urlPath}`;
  }

  received(urlPath?: string): Received[] {
    return this.#received.filter((r) => urlPath === undefined || r.path === urlPath);
  }

  /** Resolves once `predicate` holds for what a path received; fails after `timeoutMs` showing what came. */
  async waitFor(urlPath: string, predicate: (got: Received[]) => boolean, timeoutMs = 15_000): Promise<Received[]> {
    if (predicate(this.received(urlPath))) return this.received(urlPath);
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate(this.received(urlPath))) return;
        cleanup();
        resolve(this.received(urlPath));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`receiver: condition on ${urlPath} not met in ${timeoutMs} ms; got ${JSON.stringify(this.received(urlPath).map((r) => r.json))}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.#listeners = this.#listeners.filter((l) => l !== check);
      };
      this.#listeners.push(check);
    });
  }

  /** Ends every request held open with a 200. */
  releaseHanging(): void {
    for (const res of this.#hanging) if (!res.writableEnded) res.end('released');
    this.#hanging.clear();
  }

  async close(): Promise<void> {
    for (const res of this.#hanging) res.destroy();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  #handle(req: IncomingMessage, res: ServerResponse, verify: (secret: string, payload: string, signature: string) => Promise<boolean>): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks);
      const urlPath = (req.url ?? '/').split('?')[0]!;
      const secret = this.secrets.get(urlPath);
      const signature = req.headers['x-service-signature'];
      let verified: boolean | null = null;
      if (secret !== undefined) verified = typeof signature === 'string' && (await verify(secret, raw.toString('utf8'), signature));
      let json: unknown = null;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = null;
      }
      this.#received.push({ path: urlPath, method: req.method ?? '', headers: req.headers, raw, json, verified, at: Date.now() });
      for (const listener of [...this.#listeners]) listener();
      if (verified === false) {
        res.writeHead(401, { 'content-type': 'text/plain' }).end('bad signature');
        return;
      }
      const behaviour = this.behaviours.get(urlPath) ?? { status: 200, body: 'ok' };
      if (behaviour === 'hang') {
        this.#hanging.add(res);
        return;
      }
      res.writeHead(behaviour.status, { 'content-type': 'text/plain', ...behaviour.headers }).end(behaviour.body ?? '');
    });
  }
}

export { freePort as closedPort } from '../support/ports.ts';

// A tenant_admin session for the fixture's project: webhooks are not part of any agent key scope.
export { adminSession, PASSWORD } from '../admin/support.ts';

/** Polls until `check` returns a value that satisfies `done`; fails with the last value after `timeoutMs` (the kit's eventually). */
export const until = <T>(check: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000, what = 'condition'): Promise<T> => eventually(check, done, timeoutMs, what, 50);

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
