/**
 * The entry aggregate's decisions that save a revision: a save of new field values, and a restore of an older
 * revision's.
 */
import { conflict, notFound, revisionConflict } from '../../domain-error.ts';
import type { EntryContext, RestoreRevision, SaveRevision } from './entry-commands.ts';
import { authorize, event, refOf, RELOAD, requireSnapshot, scopeOf } from './entry-decision-checks.ts';
import type { EntryEvent, Snapshot } from './entry-events.ts';
import type { ExistingEntry, RevisionRef } from './entry-state.ts';

export function decideSave(entry: ExistingEntry, command: SaveRevision, context: EntryContext): EntryEvent[] {
  authorize(context.principal, 'save_revision', entry.formSetId);
  requireSnapshot(command.snapshot);
  return saveRevision(entry, command.revisionId, structuredClone(command.snapshot), command.expectedRevision, context, undefined);
}

export function decideRestore(entry: ExistingEntry, command: RestoreRevision, context: EntryContext): EntryEvent[] {
  authorize(context.principal, 'restore_revision', entry.formSetId);
  const source =
    entry.latest?.revisionId === command.fromRevisionId
      ? entry.latest
      : command.source === undefined
        ? undefined
        : { revisionId: command.fromRevisionId, revision: command.source.revision, snapshot: command.source.snapshot };
  if (!source) throw notFound(`Revision ${command.fromRevisionId} does not belong to entry ${entry.slug}.`);
  requireSnapshot(source.snapshot);
  return saveRevision(entry, command.revisionId, structuredClone(source.snapshot), command.expectedRevision, context, refOf(source));
}

/**
 * Every save appends a new draft revision with the full snapshot. Over a published revision the live
 * content stays as it is (spec section 2). While the latest revision is pending_review or scheduled,
 * saving is refused (CONFLICT): the table has no edge that would take it back to draft, so the editor
 * withdraws it first, which also cancels a scheduled publish explicitly rather than as a side effect.
 */
function saveRevision(
  entry: ExistingEntry,
  revisionId: string,
  snapshot: Snapshot,
  expectedRevision: number | undefined,
  context: EntryContext,
  restoredFrom: RevisionRef | undefined,
): EntryEvent[] {
  const latest = entry.latest;
  const latestNumber = entry.revisionCount;
  if (expectedRevision !== undefined && expectedRevision !== latestNumber) {
    throw revisionConflict(`The edit is based on revision ${expectedRevision}, but the latest revision of entry ${entry.slug} is ${latestNumber}.`, RELOAD);
  }
  const used = latest?.revisionId === revisionId ? latest : entry.live?.revisionId === revisionId ? entry.live : undefined;
  if (used) throw conflict(`Revision id ${revisionId} is already used by revision ${used.revision}.`);
  if (latest && (latest.status === 'pending_review' || latest.status === 'scheduled')) {
    throw conflict(
      `Revision ${latest.revision} is ${latest.status}: saving a new revision is not allowed while the latest revision is ${latest.status}.`,
      'Withdraw the revision (back to draft) first, then save.',
    );
  }
  return [
    event('entry.revision-saved', {
      ...scopeOf(entry),
      revisionId,
      revision: latestNumber + 1,
      snapshot,
      savedAt: context.now.toISOString(),
      ...(restoredFrom ? { restoredFrom } : {}),
    }),
  ];
}
