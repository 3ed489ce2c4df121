import { AccessService } from '../../application/access-service.ts';
import { systemClock } from '../../clock.ts';
import { IssuedKeyReplay } from '../../application/issued-key-replay.ts';
import { openKeyStore } from '../../key-store/open-key-store.ts';
import { awaitApplied } from '../await-applied.ts';
import { note, operatorCaller, parseCommandArgs, printResult, required, UsageError, withStores, type CommandGroup } from '../cli-support.ts';
import { COMMAND_USAGE } from '../usage.ts';

const USAGE = COMMAND_USAGE.keys;

/**
 * keys create: an agent key (scope, name) or a public key; prints {keyId, projectId, type, key, prefix,
 * ...} with the key in clear, once. keys revoke: either kind, by id; returns once a service running on the
 * same stores has applied the revocation (the key is refused from then on), or after about 1.5 s when no
 * service is running; prints {keyId, projectId, type, revokedAt, alreadyRevoked, inForce} (inForce: the read models the
 * service answers from show the revocation). Revoking also destroys the data key that kept the key for replays of an
 * idempotent POST /keys, as the admin API's revocation does.
 */
export const keysCommands: CommandGroup = {
  name: 'keys',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      { project: { type: 'string' }, type: { type: 'string' }, scope: { type: 'string' }, name: { type: 'string' }, 'key-id': { type: 'string' } },
      USAGE,
    );
    const [command, extra] = positionals;
    if (extra !== undefined) throw new UsageError(`unexpected argument: ${extra}`, USAGE);
    const projectId = () => required(values.project, '--project', USAGE);

    switch (command) {
      case 'create': {
        const project = projectId();
        const type = required(values.type, '--type', USAGE);
        if (type !== 'agent' && type !== 'public') throw new UsageError(`--type must be agent or public, not ${JSON.stringify(type)}`, USAGE);
        if (values['key-id'] !== undefined) throw new UsageError('--key-id is for keys revoke', USAGE);
        if (type === 'public' && (values.scope !== undefined || values.name !== undefined)) {
          throw new UsageError('--scope and --name apply to agent keys only', USAGE);
        }
        const result = await withStores(async ({ log }) => {
          const access = new AccessService({ log, clock: systemClock });
          if (type === 'public') {
            const key = await access.issuePublicKey(operatorCaller(), project);
            return { keyId: key.keyId, projectId: key.projectId, type, key: key.key, prefix: key.prefix };
          }
          const key = await access.issueAgentKey(operatorCaller(), project, values.scope ?? 'full', values.name ?? 'agent key');
          return { keyId: key.keyId, projectId: key.projectId, type, key: key.key, prefix: key.prefix, scope: key.scope, name: key.name };
        });
        note(`keys: ${type} key ${result.prefix}… issued; it is shown once, store it now`);
        printResult(result);
        return 0;
      }
      case 'revoke': {
        const project = projectId();
        const keyId = required(values['key-id'], '--key-id', USAGE);
        if (values.type !== undefined || values.scope !== undefined || values.name !== undefined) {
          throw new UsageError('keys revoke takes --project and --key-id only', USAGE);
        }
        const { result, applied } = await withStores(async ({ config, log, stores }) => {
          const revoked = await new AccessService({ log, clock: systemClock }).revokeKey(operatorCaller(), project, keyId);
          // Its replay for an idempotent POST /keys, if any, goes with it: the data key that seals it is destroyed.
          const keyStore = await openKeyStore(config);
          try {
            await new IssuedKeyReplay({ keyStore, clock: systemClock }).forget(revoked.keyId);
          } finally {
            await keyStore.close();
          }
          // In force before we return: wait for a service running on these stores to fold the revocation.
          note(`keys: ${revoked.type} key ${revoked.keyId} revoked; waiting for a running service to apply it`);
          return { result: revoked, applied: await awaitApplied(stores.readModels, revoked.position, 'access') };
        });
        if (applied === 'no-running-service') note('keys: no service is running on these stores: the key is refused from the moment one starts');
        if (applied === 'timeout') note('keys: the running service is still catching up with the log: the key is refused once it has (see npm run cli -- projections status)');
        printResult({ keyId: result.keyId, projectId: result.projectId, type: result.type, revokedAt: result.revokedAt, alreadyRevoked: !result.changed, inForce: applied === 'applied' });
        return 0;
      }
      default:
        throw new UsageError(command ? `unknown keys command: ${command}` : 'keys needs a command', USAGE);
    }
  },
};
