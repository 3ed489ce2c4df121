import { seedDemo } from '../../application/demo-content.ts';
import { systemClock } from '../../clock.ts';
import { note, operatorCaller, parseCommandArgs, printResult, UsageError, withStores, type CommandGroup } from '../cli-support.ts';

const USAGE = `  annals demo      a demo project (Business plan, en + ja) with blog and news content`;

/**
 * demo: a project to look at on first run. Prints one JSON object: {projectId, agentKey, publicApiKey,
 * adminEmail, adminPassword, formSets, publicBase}; the keys and password are shown this once.
 */
export const demoCommand: CommandGroup = {
  name: 'demo',
  usage: USAGE,
  async run(args) {
    const { positionals } = parseCommandArgs(args, {}, USAGE);
    if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`, USAGE);
    const result = await withStores(async ({ log }) => {
      note('demo: writing a project, masters, the blog and news form sets and their entries');
      return seedDemo(log, systemClock, operatorCaller());
    });
    note(`demo: project ${result.projectId}; start the service (npm start) and read ${result.publicBase}`);
    const { position: _position, ...printed } = result;
    printResult(printed);
    return 0;
  },
};
