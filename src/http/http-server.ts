import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Logger } from '../logging/logger.ts';
import { DrainState } from './drain-state.ts';
import { requestIdOf } from './request-context.ts';

export interface HttpServerTimeouts {
  /**
   * How long an idle keep-alive connection stays open. Longer than the idle timeout of load balancers in
   * front (60 s on the common ones), so that they, not we, close idle connections: otherwise a request can
   * race our close and fail. Default 65 000.
   */
  keepAliveMs?: number;
  /** Time allowed to receive a request's headers (slowloris guard). More than keepAliveMs. Default 66 000. */
  headersMs?: number;
  /** Time allowed to receive a whole request, body included (large uploads). Default 300 000. */
  requestMs?: number;
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
  /**
   * Answers a request before Koa when it can (the public response cache); false hands it to Koa. Runs after
   * the drain handling, so a draining server still closes connections behind its answers.
   */
  fastLane?: (req: IncomingMessage, res: ServerResponse) => boolean;
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

  const server = createServer();
  const timeouts = options.timeouts ?? {};
  server.keepAliveTimeout = timeouts.keepAliveMs ?? 65_000;
  server.headersTimeout = timeouts.headersMs ?? 66_000;
  server.requestTimeout = timeouts.requestMs ?? 300_000;

  // While draining, a connection is closed as soon as its last response is out instead of idling, and
  // responses started while draining tell the client so (Connection: close).
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (drain.draining) res.setHeader('Connection', 'close');
    res.once('finish', () => {
      if (drain.draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  const handle = app.callback();
  const fastLane = options.fastLane;
  server.on('request', fastLane ? (req: IncomingMessage, res: ServerResponse) => void (fastLane(req, res) || handle(req, res)) : handle);

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
      const started = Date.now();
      const forceTimer = setTimeout(() => {
        logger.warn({ graceMs }, 'http server grace period over: closing remaining connections');
        server.closeAllConnections();
      }, graceMs);
      server.close(() => {
        clearTimeout(forceTimer);
        logger.info({ durationMs: Date.now() - started }, 'http server closed');
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
