import { Writable } from 'node:stream';
import Koa from 'koa';
import type { Middleware } from 'koa';
import { createLogger } from '../../src/logging/logger.ts';
import type { Logger, LogLevel } from '../../src/logging/logger.ts';
import { startHttpServer } from '../../src/http/http-server.ts';
import type { HttpServerOptions, RunningHttpServer } from '../../src/http/http-server.ts';

/** A logger writing into memory: `lines()` parses what was written so far. */
export interface CapturedLogger {
  logger: Logger;
  text(): string;
  lines(): Array<Record<string, unknown>>;
}

export function captureLogger(level: LogLevel = 'debug'): CapturedLogger {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  const logger = createLogger({ level, destination });
  return {
    logger,
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** A Koa app with the given middleware, started on 127.0.0.1, port 0. Remember to close it. */
// Koa's own `use` is generic over the context; routers' middleware expects the router's context additions.
type AnyMiddleware = Middleware<any, any>;

export async function serve(
  middleware: AnyMiddleware[],
  options: { logger?: Logger } & Partial<Omit<HttpServerOptions, 'app' | 'port' | 'host' | 'logger'>> = {},
): Promise<RunningHttpServer> {
  const app = new Koa();
  for (const m of middleware) app.use(m);
  const logger = options.logger ?? captureLogger().logger;
  return startHttpServer({ ...options, app, port: 0, host: '127.0.0.1', logger });
}

/** A promise with its resolve function outside. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
