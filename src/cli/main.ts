/**
 * Operator commands: `npm run cli -- <command>`.
 *
 *   projections status [--json]                     checkpoint, lag and failures of every projection
 *   projections rebuild [name] [--json]             rebuild one projection (or all) into a new generation
 *   projections retry <name>                        resume a paused projection at the event it failed on
 *   projections skip <name> --reason TEXT [--json]  record a skip of the failed event, then resume
 *
 * Runs beside a running service on the same stores: rebuilds swap in while the service keeps serving,
 * and the service's projectors follow. Exit codes: 0 done, 1 failed, 2 usage or configuration error.
 */
import { parseArgs } from 'node:util';
import os from 'node:os';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../config/config.ts';
import { createLogger } from '../logging/logger.ts';
import { systemClock } from '../clock.ts';
import { EventLog } from '../event-store/event-log.ts';
import { serviceEventCatalog } from '../service/event-catalog.ts';
import { openStores, StoreStartupError } from '../service/open-stores.ts';
import { projections } from '../../projections/index.ts';
import { readProjectionStatus } from '../projection-engine/projection-status.ts';
import { ProjectionOperations, OperationError } from '../projection-engine/projection-operations.ts';
import { RebuildPausedError } from '../projection-engine/rebuild.ts';
import { RebuildProgressBar } from './rebuild-progress-bar.ts';

const USAGE = `usage:
  npm run cli -- projections status [--json]
  npm run cli -- projections rebuild [name] [--json]
  npm run cli -- projections retry <name>
  npm run cli -- projections skip <name> --reason TEXT [--json]`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, reason: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help || positionals.length === 0) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const [group, command, name] = positionals;
  if (group !== 'projections' || !command) throw new UsageError(`unknown command: ${positionals.join(' ')}`);

  const config = loadConfig();
  // Operator output goes to stdout; the service's own log lines go to stderr, warnings and up only.
  const logger = createLogger({ level: config.logLevel === 'silent' ? 'silent' : 'warn', destination: pino.destination(2) });
  const stores = await openStores(config, logger);
  const log = new EventLog(stores.events, serviceEventCatalog(), systemClock);
  const operations = new ProjectionOperations({ projections, log, store: stores.readModels, clock: systemClock, logger });
  const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, values.json ? undefined : 2)}\n`);
  try {
    switch (command) {
      case 'status': {
        const status = await readProjectionStatus(projections, stores.readModels, log);
        if (values.json) print(status);
        else process.stdout.write(formatStatus(status));
        return status.some((s) => s.state === 'paused') ? 1 : 0;
      }
      case 'rebuild': {
        const targets = name ? [operations.projection(name)] : projections;
        const results = [];
        for (const projection of targets) {
          const bar = values.json ? undefined : new RebuildProgressBar(projection.name, process.stderr);
          try {
            const result = await operations.rebuild(projection.name, { onProgress: (p) => bar?.update(p) });
            bar?.finish(result.events);
            results.push({ ...result, checkpoint: result.checkpoint === null ? null : result.checkpoint.toString(), eventsPerSecond: rate(result.events, result.durationMs) });
          } finally {
            bar?.stop();
          }
        }
        print(values.json ? results : results.map((r) => `${r.projection}: generation ${r.generation} swapped in, ${r.events} events in ${r.durationMs} ms (${r.eventsPerSecond} events/s)`));
        return 0;
      }
      case 'retry': {
        if (!name) throw new UsageError('retry needs a projection name');
        print(await operations.retry(name));
        return 0;
      }
      case 'skip': {
        if (!name) throw new UsageError('skip needs a projection name');
        if (!values.reason?.trim()) throw new UsageError('skip needs --reason "why this event may be passed over" (it is recorded)');
        print(await operations.skip(name, values.reason.trim(), { type: 'operator', id: os.userInfo().username || 'unknown' }));
        return 0;
      }
      default:
        throw new UsageError(`unknown projections command: ${command}`);
    }
  } finally {
    await stores.close();
  }
}

function formatStatus(status: Awaited<ReturnType<typeof readProjectionStatus>>): string {
  const lines = status.map((s) => {
    const active = s.active;
    const head = `${s.name.padEnd(20)} ${s.state.padEnd(11)} v${s.version} gen ${active?.generation ?? '-'} checkpoint ${active?.checkpoint ?? '-'} lag ${active?.lag ?? '-'}`;
    const failure = active?.failure ? `\n    paused at ${active.failure.eventId} (${active.failure.eventType} in ${active.failure.streamId}): ${active.failure.message}` : '';
    const building = s.building ? `\n    rebuilding: generation ${s.building.generation} at ${s.building.checkpoint ?? 'start'}` : '';
    return head + failure + building;
  });
  return `${lines.join('\n')}\n`;
}

function rate(events: number, ms: number): number {
  return ms > 0 ? Math.round((events * 1000) / ms) : events;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n${error instanceof UsageError ? USAGE + '\n' : ''}`);
      process.exit(2);
    }
    if (error instanceof StoreStartupError || error instanceof OperationError || error instanceof RebuildPausedError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exit(1);
  },
);
