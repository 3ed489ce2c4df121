import { actorOf } from '../../domain/access/caller.ts';
import { systemClock } from '../../clock.ts';
import { projections } from '../../../projections/index.ts';
import { readProjectionStatus } from '../../projection-engine/projection-status.ts';
import { ProjectionOperations } from '../../projection-engine/projection-operations.ts';
import { DROP_GRACE_MS } from '../../projection-engine/rebuild.ts';
import { RebuildProgressBar } from '../rebuild-progress-bar.ts';
import { operatorCaller, parseCommandArgs, UsageError, withStores, type CommandGroup } from '../cli-support.ts';
import { COMMAND_USAGE } from '../usage.ts';

const USAGE = COMMAND_USAGE.projections;

/**
 *   projections status [--json]                     checkpoint, lag and failures of every projection
 *   projections rebuild [name] [--json]             rebuild one projection (or all) into a new generation
 *   projections retry <name>                        resume a paused projection at the event it failed on
 *   projections skip <name> --reason TEXT [--json]  record a skip of the failed event, then resume
 *
 * Runs beside a running service on the same stores: rebuilds swap in while the service keeps serving,
 * and the service's projectors follow.
 */
export const projectionsCommands: CommandGroup = {
  name: 'projections',
  usage: USAGE,
  async run(args, options) {
    const { values: parsed, positionals } = parseCommandArgs(args, { reason: { type: 'string' } }, USAGE);
    const values = { ...parsed, json: options.json };
    const [command, name] = positionals;
    if (!command) throw new UsageError('projections needs a command', USAGE);
    if (!['status', 'rebuild', 'retry', 'skip'].includes(command)) throw new UsageError(`unknown projections command: ${command}`, USAGE);
    if ((command === 'retry' || command === 'skip') && !name) throw new UsageError(`${command} needs a projection name`, USAGE);
    if (command === 'skip' && !values.reason?.trim()) throw new UsageError('skip needs --reason "why this event may be passed over" (it is recorded)', USAGE);

    return withStores(async ({ stores, log, logger }) => {
      const operations = new ProjectionOperations({ projections, log, store: stores.readModels, clock: systemClock, logger });
      const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, values.json ? undefined : 2)}\n`);
      switch (command) {
        case 'status': {
          const status = await readProjectionStatus(projections, stores.readModels, log);
          if (values.json) print(status);
          else process.stdout.write(formatStatus(status));
          return status.some((s) => s.state === 'paused') ? 1 : 0;
        }
        case 'rebuild': {
          const targets = name ? [operations.projection(name)] : projections;
          const started = Date.now();
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
          // The replaced generations stay readable for readers mid-request, then go (all in one grace).
          if (results.some((r) => r.previousGeneration !== null)) process.stderr.write(`dropping the replaced generations in ${DROP_GRACE_MS / 1000} s...\n`);
          await operations.droppedAll();
          const wallMs = Date.now() - started;
          print(
            values.json
              ? results
              : [
                  ...results.map((r) => `${r.projection}: generation ${r.generation} swapped in, ${r.events} events in ${r.durationMs} ms (${r.eventsPerSecond} events/s)`),
                  `${results.length} projection(s) rebuilt in ${wallMs} ms, replaced generations dropped`,
                ],
          );
          return 0;
        }
        case 'retry':
          print(await operations.retry(name!));
          return 0;
        default:
          print(await operations.skip(name!, values.reason!.trim(), actorOf(operatorCaller())));
          return 0;
      }
    });
  },
};

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
