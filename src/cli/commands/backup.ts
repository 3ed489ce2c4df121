import { loadConfig } from '../../config/config.ts';
import { takeBackup } from '../../backup/take-backup.ts';
import { restoreBackup } from '../../backup/restore-backup.ts';
import { sizeText } from '../../backup/backup-manifest.ts';
import { note, parseCommandArgs, printResult, UsageError, type CommandGroup } from '../cli-support.ts';
import { COMMAND_USAGE } from '../usage.ts';

const BACKUP_USAGE = COMMAND_USAGE.backup;
const RESTORE_USAGE = COMMAND_USAGE.restore;

function folderArgument(args: string[], usage: string): string {
  const { positionals } = parseCommandArgs(args, {}, usage);
  const [dir, extra] = positionals;
  if (!dir) throw new UsageError('the backup folder is missing', usage);
  if (extra !== undefined) throw new UsageError(`unexpected argument: ${extra}`, usage);
  return dir;
}

/** backup: prints {backup, createdAt, eventLogHead, files, bytes}; progress on stderr. */
export const backupCommand: CommandGroup = {
  name: 'backup',
  usage: BACKUP_USAGE,
  async run(args) {
    const dir = folderArgument(args, BACKUP_USAGE);
    const config = loadConfig();
    const manifest = await takeBackup(config, dir, note);
    const bytes = manifest.files.reduce((sum, f) => sum + f.bytes, 0);
    note(`backup: ${manifest.files.length} files, ${sizeText(bytes)}, event log up to position ${manifest.eventLogHead ?? '(empty)'}`);
    printResult({ backup: dir, createdAt: manifest.createdAt, eventLogHead: manifest.eventLogHead, files: manifest.files.length, bytes });
    return 0;
  },
};

/** restore: prints {dataDir, restoredFrom, createdAt, eventLogHead, files, bytes}; progress on stderr. */
export const restoreCommand: CommandGroup = {
  name: 'restore',
  usage: RESTORE_USAGE,
  async run(args) {
    const dir = folderArgument(args, RESTORE_USAGE);
    const result = await restoreBackup(loadConfig(), dir, note);
    note(`restore: done; start the service on ${result.dataDir}: its projectors catch the read models up with the log`);
    printResult(result);
    return 0;
  },
};
