/**
 * The entry aggregate's decision on a create command: a new entry, and its first revision when one is given.
 */
import { conflict, notFound } from '../../domain-error.ts';
import type { CreateEntry, EntryContext } from './entry-commands.ts';
import { authorize, event, requireSnapshot, visibleTo, type Scope } from './entry-decision-checks.ts';
import type { EntryEvent } from './entry-events.ts';
import type { EntryState } from './entry-state.ts';
import { validateImportMetadata } from './import-metadata.ts';
import { validateSlug } from './slug.ts';

export function decideCreate(command: CreateEntry, state: EntryState, context: EntryContext): EntryEvent[] {
  if (state.exists) throw conflict(`Entry ${command.entryId} already exists${state.deleted ? ' (deleted; its id is not reused)' : ''}.`);
  authorize(context.principal, 'create', command.formSetId);
  if (!visibleTo(context.principal, command.projectId)) throw notFound(`Form set ${command.formSetId} does not exist.`);
  validateSlug(command.slug);
  validateImportMetadata({ importPath: command.importPath, external: command.external });
  const scope: Scope = { entryId: command.entryId, projectId: command.projectId, formSetId: command.formSetId };
  const events: EntryEvent[] = [
    event('entry.created', {
      ...scope,
      slug: command.slug,
      ...(command.importPath === undefined ? {} : { importPath: command.importPath }),
      ...(command.external === undefined ? {} : { external: { ...command.external } }),
      ...(command.duplicatedFrom === undefined ? {} : { duplicatedFrom: { ...command.duplicatedFrom } }),
    }),
  ];
  if (command.initialRevision) {
    requireSnapshot(command.initialRevision.snapshot);
    events.push(
      event('entry.revision-saved', {
        ...scope,
        revisionId: command.initialRevision.revisionId,
        revision: 1,
        snapshot: structuredClone(command.initialRevision.snapshot),
        savedAt: context.now.toISOString(),
      }),
    );
  }
  return events;
}
