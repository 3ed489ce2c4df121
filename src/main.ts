/**
 * `npm start`: runs the service with the configuration from the environment (see docs/configuration.md).
 * SIGTERM and SIGINT drain in-flight requests, stop projectors at a committed checkpoint and close the
 * stores, within SHUTDOWN_DEADLINE_MS whatever happens; a second signal (a second or more after the first)
 * exits at once (src/service/shutdown.ts).
 */
// First: before any other module allocates (see the module).
import './service/short-lived-allocations.ts';
import { ConfigError, loadConfig } from './config/config.ts';
import { createLogger } from './logging/logger.ts';
import { systemClock } from './clock.ts';

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`annals: configuration error: ${error.message}\n`);
  process.exit(2);
}

// The service's modules are loaded once the configuration is known to be good (~1.5 s of CPU that a refused
// setting need not cost). Until the handlers below are installed a signal ends the process at once, as
// nothing is open yet.
const { startService } = await import('./service/service.ts');
const { shutdownOnSignals } = await import('./service/shutdown.ts');

const logger = createLogger({ level: config.logLevel });
// The handlers come before the start: a signal sent while the service starts (its stores opening, its listener
// just bound, the data folder's permissions still being read) stops it once started, instead of killing it
// by the signal's default action with its lock and stores as they were.
const starting = startService(config, { logger, clock: systemClock });
const shutdown = shutdownOnSignals({
  stop: async (progress) => {
    progress('the service to finish starting');
    const service = await starting;
    await service.stop(progress);
  },
  logger,
  deadlineMs: config.shutdownDeadlineMs,
});
process.on('SIGTERM', () => shutdown.onSignal('SIGTERM'));
process.on('SIGINT', () => shutdown.onSignal('SIGINT'));
try {
  await starting;
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  logger.fatal({ err: error }, `cannot start: ${message}`);
  logger.flush();
  process.stderr.write(`annals: cannot start: ${message}\n`);
  process.exit(1);
}
