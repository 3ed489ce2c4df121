import { AccessService } from '../../application/access-service.ts';
import { systemClock } from '../../clock.ts';
import { operatorCaller, parseCommandArgs, printResult, required, UsageError, withStores, type CommandGroup } from '../cli-support.ts';
import { COMMAND_USAGE } from '../usage.ts';

const USAGE = COMMAND_USAGE.projects;

/** projects set-plan: prints {projectId, plan, previousPlan}; setting the current plan changes nothing. */
export const projectsCommands: CommandGroup = {
  name: 'projects',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, { project: { type: 'string' }, plan: { type: 'string' } }, USAGE);
    const [command, extra] = positionals;
    if (command !== 'set-plan') throw new UsageError(command ? `unknown projects command: ${command}` : 'projects needs a command', USAGE);
    if (extra !== undefined) throw new UsageError(`unexpected argument: ${extra}`, USAGE);
    const projectId = required(values.project, '--project', USAGE);
    const plan = required(values.plan, '--plan', USAGE);
    const result = await withStores(({ log }) => new AccessService({ log, clock: systemClock }).changePlan(operatorCaller(), projectId, plan));
    printResult({ projectId: result.projectId, plan: result.plan, previousPlan: result.previousPlan });
    return 0;
  },
};
