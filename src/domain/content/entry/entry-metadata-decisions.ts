/**
 * The entry aggregate's decisions on the entry itself rather than a revision: rename it, set its import
 * metadata, assign it, delete it.
 */
import { invalid } from '../../domain-error.ts';
import { requirePlan } from '../../plans.ts';
import type { Assign, DeleteEntry, EntryContext, Rename, SetImportMetadata } from './entry-commands.ts';
import { authorize, event, requirePersonForLive, scopeOf } from './entry-decision-checks.ts';
import type { EntryEvent, ExternalIdentity } from './entry-events.ts';
import type { ExistingEntry } from './entry-state.ts';
import { validateImportMetadata } from './import-metadata.ts';
import { validateSlug } from './slug.ts';

export function decideRename(entry: ExistingEntry, command: Rename, context: EntryContext): EntryEvent[] {
  authorize(context.principal, 'rename', entry.formSetId);
  validateSlug(command.slug);
  if (command.slug === entry.slug) return [];
  requirePersonForLive(entry, context, 'rename', 'rename a live entry (its public URL changes; the old one redirects)');
  return [event('entry.slug-changed', { ...scopeOf(entry), from: entry.slug, to: command.slug })];
}

export function decideImportMetadata(entry: ExistingEntry, command: SetImportMetadata, context: EntryContext): EntryEvent[] {
  authorize(context.principal, 'set_import_metadata', entry.formSetId);
  validateImportMetadata({ importPath: command.importPath, external: command.external });
  const importPath = command.importPath === undefined ? entry.importPath : command.importPath;
  const external =
    command.external === undefined
      ? entry.external
      : command.external === null
        ? null
        : {
            ...(command.external.sourceType === undefined ? {} : { sourceType: command.external.sourceType }),
            ...(command.external.entityType === undefined ? {} : { entityType: command.external.entityType }),
            externalId: command.external.externalId,
          };
  if (importPath === entry.importPath && sameExternal(external, entry.external)) return [];
  requirePersonForLive(entry, context, 'set_import_metadata', 'change the import path or external id of a live entry (the public API finds it by them)');
  return [event('entry.import-metadata-set', { ...scopeOf(entry), importPath, external })];
}

function sameExternal(a: ExternalIdentity | null, b: ExternalIdentity | null): boolean {
  if (a === null || b === null) return a === b;
  return a.sourceType === b.sourceType && a.entityType === b.entityType && a.externalId === b.externalId;
}

export function decideAssign(entry: ExistingEntry, command: Assign, context: EntryContext): EntryEvent[] {
  requirePlan(context.plan, 'business', 'Assigning entries');
  authorize(context.principal, 'assign', entry.formSetId);
  const userId = command.userId;
  if (userId !== null && (typeof userId !== 'string' || userId.length === 0 || userId.length > 200)) throw invalid('userId must be a user id (1 to 200 characters) or null');
  if (userId === entry.assignee) return [];
  return [event('entry.assigned', { ...scopeOf(entry), userId })];
}

export function decideDelete(entry: ExistingEntry, _command: DeleteEntry, context: EntryContext): EntryEvent[] {
  authorize(context.principal, 'delete', entry.formSetId);
  requirePersonForLive(entry, context, 'delete', 'delete a live entry (the public API answers 404 for it)');
  return [event('entry.deleted', { ...scopeOf(entry), slug: entry.slug, previousSlugs: [...entry.previousSlugs] })];
}
