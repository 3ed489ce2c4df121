import { pino } from 'pino';
import type { Logger } from '../logging/logger.ts';

export interface ShutdownOptions {
  /** Stops the service, naming each step as it begins (what the deadline reports as still waited for). */
  stop: (progress: (step: string) => void) => Promise<void>;
  logger: Logger;
  /** SHUTDOWN_DEADLINE_MS: after the first signal, the process ends within this long whatever is still pending. */
  deadlineMs: number;
  /** Longest wait for the log to be written out before the process ends. Default 1000. */
  flushMs?: number;
  /**
   * A second signal within this long of the first is the same request delivered twice (Ctrl-C under `npm start`
   * reaches the process from the terminal and again from npm), not the operator asking to exit at once.
   * Default REPEATED_SIGNAL_WINDOW_MS.
   */
  repeatWindowMs?: number;
  /** Ends the process (`flushed`: the log was written out); default endProcess. Tests pass their own. */
  exit?: (code: number, flushed: boolean) => void;
}

export const REPEATED_SIGNAL_WINDOW_MS = 1000;

export interface Shutdown {
  /** What a SIGTERM or SIGINT does: the first starts stopping (with the deadline), a second ends the process at once. */
  onSignal(signal: string): void;
}

/**
 * Graceful stop with a hard deadline. The first SIGTERM or SIGINT stops the service (drain requests, stop
 * projectors at a checkpoint, close stores) and exits 0, or 1 when stopping failed. Whatever happens, the process
 * ends within `deadlineMs` of that signal: at the deadline it logs the step it was still waiting for and exits 1;
 * a second signal (a second or more after the first) exits 1 at once.
 *
 * Ending must not itself hang: node's process.exit() runs exit handlers, and the logger's handler writes its
 * buffer out synchronously, retrying forever while stdout is a pipe nobody reads (a service in that state took
 * three SIGTERMs over three minutes without exiting). So the log gets `flushMs` to be written out, and then
 * the process ends without running exit handlers.
 */
export function shutdownOnSignals(options: ShutdownOptions): Shutdown {
  const { logger, deadlineMs } = options;
  const exit = options.exit ?? endProcess;
  const flushMs = options.flushMs ?? 1000;
  const repeatWindowMs = options.repeatWindowMs ?? REPEATED_SIGNAL_WINDOW_MS;
  let step = 'starting to stop';
  let started: number | undefined;
  let ending = false;

  const end = (code: number): void => {
    if (ending) return;
    ending = true;
    void drainLog(logger, flushMs).then((flushed) => exit(code, flushed));
  };

  return {
    onSignal(signal) {
      if (started !== undefined) {
        if (Date.now() - started < repeatWindowMs) return;
        logger.warn({ signal, waitingFor: step }, 'second signal: exiting now');
        end(1);
        return;
      }
      started = Date.now();
      logger.info({ signal, deadlineMs }, 'shutting down: draining requests and stopping projectors');
      // Kept referenced: even when nothing else is left to wait on, the process ends by the deadline at the latest.
      const deadline = setTimeout(() => {
        logger.error({ signal, deadlineMs, waitingFor: step }, `shutdown deadline of ${deadlineMs} ms passed while waiting for ${step}: exiting anyway`);
        end(1);
      }, deadlineMs);
      options
        .stop((next) => {
          step = next;
        })
        .then(
          () => {
            clearTimeout(deadline);
            logger.info({ durationMs: Date.now() - started! }, 'stopped cleanly');
            end(0);
          },
          (error: unknown) => {
            clearTimeout(deadline);
            logger.error({ err: error, waitingFor: step }, 'error while stopping');
            end(1);
          },
        );
    },
  };
}

/**
 * Ends the log's stream and waits, at most `ms`, until everything logged has been written out ('finish'). False
 * when it was not (a stdout nobody reads), or when the logger has no stream that says so.
 */
function drainLog(logger: Logger, ms: number): Promise<boolean> {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as Partial<NodeJS.WritableStream & { once(event: string, listener: () => void): unknown }> | undefined;
  if (!stream || typeof stream.end !== 'function' || typeof stream.once !== 'function') return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    stream.once!('finish', () => {
      clearTimeout(timer);
      resolve(true);
    });
    stream.once!('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
    stream.end!();
  });
}

/**
 * Ends the process with `code`, without running exit handlers: the logger's handler would write its buffer out
 * synchronously, forever if stdout is a pipe nobody reads (the log has been drained, or given up on, already).
 * process.reallyExit is what process.exit calls once the handlers have run.
 */
export function endProcess(code: number): void {
  const reallyExit = (process as unknown as { reallyExit?: (code: number) => never }).reallyExit;
  if (typeof reallyExit === 'function') reallyExit.call(process, code);
  process.exit(code);
}
