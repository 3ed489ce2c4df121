/**
 * `npm start`: runs the service with the configuration from the environment (see README).
 * SIGTERM and SIGINT drain in-flight requests, stop projectors at a committed checkpoint and close the
 * stores; a second signal (a second or more after the first) exits at once.
 */
import { ConfigError, loadConfig } from './config/config.ts';
import { createLogger } from './logging/logger.ts';
import { systemClock } from './clock.ts';
import { startService } from './service/service.ts';

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`annals: configuration error: ${error.message}\n`);
  process.exit(2);
}

/** A second signal within this time of the first is the same request, delivered twice. */
const REPEATED_SIGNAL_WINDOW_MS = 1000;

const logger = createLogger({ level: config.logLevel });
try {
  const service = await startService(config, { logger, clock: systemClock });
  let signalledAt: number | undefined;
  const shutdown = (signal: string) => {
    if (signalledAt !== undefined) {
      // Ctrl-C under `npm start` reaches this process twice at once: from the terminal (same process group)
      // and forwarded by npm. Only a signal sent after that is the operator asking to exit at once.
      if (Date.now() - signalledAt < REPEATED_SIGNAL_WINDOW_MS) return;
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    signalledAt = Date.now();
    logger.info({ signal }, 'shutting down: draining requests and stopping projectors');
    service.stop().then(
      () => {
        logger.info('stopped cleanly');
        logger.flush();
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  logger.fatal({ err: error }, `cannot start: ${message}`);
  logger.flush();
  process.stderr.write(`annals: cannot start: ${message}\n`);
  process.exit(1);
}
