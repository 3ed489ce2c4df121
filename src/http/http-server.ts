import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type Koa from 'koa';
import type { Logger } from '../logging/logger.ts';
import { DrainState } from './drain-state.ts';
import type { LoadShedder } from './load-shedding.ts';
import { requestIdOf } from './request-context.ts';
import { clientKey } from './client-address.ts';

export interface HttpServerTimeouts {
  /**
   * How long an idle keep-alive connection stays open. Longer than the idle timeout of load balancers in
   * front (60 s on the common ones), so that they, not we, close idle connections: otherwise a request can
   * race our close and fail. Default 65 000.
   */
  keepAliveMs?: number;
  /**
   * Time allowed to receive a request's headers (slowloris guard), counted from the first byte of the request,
   * and on a new connection from its opening, also when the client sends nothing at all. Default 20 000.
   */
  headersMs?: number;
  /** Time allowed to receive a whole request, body included (large uploads). Default 300 000. */
  requestMs?: number;
}

export interface HttpServerLimits {
  /** Connections open at once; further ones are closed as they arrive (node's server.maxConnections). */
  maxConnections?: number;
  /**
   * Connections open at once from one client (clientKey: an IPv4 address, an IPv6 /64); further ones are
   * closed as they arrive. 0: no limit. Not applied when `behindProxy`: every connection then comes from the
   * proxy, and the load shedder limits the requests in progress per forwarded client instead.
   */
  maxConnectionsPerClient?: number;
  /** Clients reach the service through a trusted reverse proxy (TRUST_PROXY). */
  behindProxy?: boolean;
}

export interface HttpServerOptions {
  app: Koa;
  /** 0 picks a free port; the actual one is in the result. */
  port: number;
  host: string;
  logger: Logger;
  /** Shared with the health routes so /healthz and /readyz answer 503 once close() begins. Default: a new one. */
  drain?: DrainState;
  timeouts?: HttpServerTimeouts;
  limits?: HttpServerLimits;
  /** Refuses requests early (503) under overload; runs after the fast lane (a cache hit is cheaper than a refusal). */
  shedder?: LoadShedder;
  /**
   * Answers a request before Koa when it can (the public response cache); false hands it to Koa. Runs after
   * the drain handling, so a draining server still closes connections behind its answers.
   */
  fastLane?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /**
   * Answers a request the shedder admitted, before Koa, when it can (the public fast reads, which read the
   * stores); resolving false hands it to Koa, which then finds nothing sent.
   */
  admittedLane?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
}

export interface RunningHttpServer {
  /** The port actually listened on. */
  readonly port: number;
  /** Base URL for clients, e.g. http://127.0.0.1:8080 (a wildcard host is given as loopback). */
  readonly url: string;
  readonly server: Server;
  readonly drain: DrainState;
  /**
   * Graceful stop, idempotent: marks draining, stops accepting connections, closes idle keep-alive connections
   * at once and each busy one as soon as its in-flight request is answered; after `graceMs` destroys what is
   * left. Resolves when every connection is closed.
   */
  close(graceMs?: number): Promise<void>;
}

export const DEFAULT_GRACE_MS = 10_000;

/** Listens with node:http and resolves once listening; rejects on a listen error (EADDRINUSE, EACCES, ...). */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const { app, logger } = options;
  const drain = options.drain ?? new DrainState();

  if (app.listenerCount('error') === 0) {
    // Errors Koa handles itself (a failing response stream, anything thrown outside the error envelope).
    app.on('error', (err: unknown, ctx?: Koa.Context) => {
      // A client that goes away mid-response (a cancelled download, a video seek) is routine, not an error.
      const code = (err as { code?: unknown } | null)?.code;
      const level = code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET' || code === 'EPIPE' ? 'debug' : 'error';
      logger[level]({ err, reqId: ctx ? requestIdOf(ctx) : undefined }, level === 'debug' ? 'client went away mid-response' : 'unhandled request error');
    });
  }

  // Header and request timeouts are enforced when the server checks its connections: every second, rather
  // than node's default 30 s, so that a slow-header client is cut near HTTP_HEADERS_TIMEOUT_MS, not 30 s later.
  const server = createServer({ connectionsCheckingInterval: 1000 });
  const timeouts = options.timeouts ?? {};
  server.keepAliveTimeout = timeouts.keepAliveMs ?? 65_000;
  server.headersTimeout = timeouts.headersMs ?? 20_000;
  server.requestTimeout = timeouts.requestMs ?? 300_000;
  // Node counts the header time from a request's first byte: a connection that sends nothing at all is never
  // cut by it (nor by anything else: server.timeout is 0), and would hold its slot for good. It gets the
  // same time to begin, then node's own timers take over.
  const opened = new WeakSet<Socket>();
  server.on('connection', (socket: Socket) => {
    opened.add(socket);
    socket.setTimeout(server.headersTimeout);
  });
  server.on('request', (req: IncomingMessage) => {
    if (!opened.delete(req.socket)) return;
    // Node sets the keep-alive timeout itself once a response is over; until then, no idle timer.
    if (req.socket.timeout === server.headersTimeout) req.socket.setTimeout(0);
  });

  // While draining, a connection is closed as soon as its last response is out instead of idling, and
  // responses started while draining tell the client so (Connection: close).
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (drain.draining) res.setHeader('Connection', 'close');
    res.once('finish', () => {
      if (drain.draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  const limits = options.limits ?? {};
  if (limits.maxConnections !== undefined) server.maxConnections = limits.maxConnections;
  const perClient = limits.behindProxy ? 0 : (limits.maxConnectionsPerClient ?? 0);
  if (perClient > 0) {
    const open = new Map<string, number>();
    server.on('connection', (socket) => {
      const address = clientKey(socket.remoteAddress);
      const count = (open.get(address) ?? 0) + 1;
      if (count > perClient) {
        socket.destroy();
        return;
      }
      open.set(address, count);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left <= 0) open.delete(address);
        else open.set(address, left);
      });
    });
  }

  const handle = app.callback();
  const fastLane = options.fastLane;
  const shedder = options.shedder;
  const admittedLane = options.admittedLane;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (fastLane?.(req, res)) return;
    if (shedder && !shedder.admit(req, res)) return;
    if (!admittedLane) return void handle(req, res);
    admittedLane(req, res).then(
      (done) => void (done || handle(req, res)),
      () => void handle(req, res),
    );
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (error) => logger.error({ err: error }, 'http server error'));

  const port = (server.address() as AddressInfo).port;
  const url = `http://${urlHost(options.host)}:${port}`;
  logger.info({ url, host: options.host, port }, 'http server listening');

  let closing: Promise<void> | undefined;
  const close = (graceMs: number = DEFAULT_GRACE_MS): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      drain.begin();
      logger.info({ graceMs }, 'http server draining');
      const started = performance.now();
      const forceTimer = setTimeout(() => {
        logger.warn({ graceMs }, 'http server grace period over: closing remaining connections');
        server.closeAllConnections();
      }, graceMs);
      server.close(() => {
        clearTimeout(forceTimer);
        logger.info({ durationMs: Math.round(performance.now() - started) }, 'http server closed');
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };

  return { port, url, server, drain, close };
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
