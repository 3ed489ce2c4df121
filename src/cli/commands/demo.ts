import { seedDemo } from '../../application/demo-content.ts';
import { openBlobStore } from '../../blobs/open-blob-store.ts';
import { systemClock } from '../../clock.ts';
import type { Config } from '../../config/config.ts';
import { note, operatorCaller, parseCommandArgs, printResult, UsageError, withStores, type CommandGroup } from '../cli-support.ts';
import { COMMAND_USAGE } from '../usage.ts';

const USAGE = COMMAND_USAGE.demo;

/**
 * demo: a project to look at on first run. Prints one JSON object: {projectId, agentKey, publicApiKey,
 * adminEmail, adminPassword, formSets, contactForms, mediaAssets, serviceUrl, publicBase, adminApi,
 * hostedContactPage, console, sampleEntry}, the URLs absolute; the keys and password are shown this once.
 */
export const demoCommand: CommandGroup = {
  name: 'demo',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, { 'base-url': { type: 'string' } }, USAGE);
    if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`, USAGE);
    const result = await withStores(async ({ log, config }) => {
      const serviceUrl = baseUrl(values['base-url'], config);
      const blobs = await openBlobStore(config.media.blobs);
      try {
        note('demo: writing a project, masters, Open Graph images, the blog and news form sets and their entries, a contact form');
        return await seedDemo(log, systemClock, operatorCaller(), { blobs, serviceUrl });
      } finally {
        await blobs.close();
      }
    });
    note(`demo: project ${result.projectId}; start the service (npm start) and open ${result.sampleEntry}`);
    const { position: _position, ...printed } = result;
    printResult(printed);
    return 0;
  },
};

/** --base-url without its trailing slash, or the service's own address from HOST and PORT. */
function baseUrl(given: string | undefined, config: Config): string {
  if (given === undefined) {
    const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
    return `http://${host}:${config.port === 0 ? 8080 : config.port}`;
  }
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`--base-url ${JSON.stringify(given)} is not a URL`, USAGE);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username) {
    throw new UsageError(`--base-url must be an http(s) URL without query, fragment or credentials, like https://cms.example.com`, USAGE);
  }
  return url.href.replace(/\/+$/, '');
}
