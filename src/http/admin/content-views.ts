import { z } from 'zod';
import { IN_REVIEW_STATUSES, REVISION_STATUSES } from '../../domain/content/entry/entry-workflow.ts';

/** The admin API's answers for form sets, entries and revisions, shaped from their read-model documents. */

export function formSetSummary(doc: Record<string, unknown>) {
  return { id: doc['formSetId'], slug: doc['slug'], name: doc['name'], description: doc['description'] ?? null, version: doc['version'] };
}

export function formSetDetail(doc: Record<string, unknown>) {
  return { ...formSetSummary(doc), definition: doc['definition'] };
}

export function entrySummary(doc: Record<string, unknown>) {
  return {
    id: doc['entryId'],
    slug: doc['slug'],
    formSetId: doc['formSetId'],
    previousSlugs: doc['previousSlugs'],
    importPath: doc['importPath'] ?? null,
    external: doc['external'] ?? null,
    assignee: doc['assignee'] ?? null,
    title: doc['title'] ?? '',
    latestRevision: doc['latestRevision'] ?? null,
    liveRevision: doc['liveRevision'] ?? null,
    revisionCount: doc['revisionCount'] ?? 0,
    createdAt: doc['createdAt'],
    updatedAt: doc['updatedAt'],
    updatedBy: doc['updatedBy'] ?? null,
  };
}

/** One entry: its summary, and links to the lists that hold the rest of it (never every revision inline). */
export function entryDetail(doc: Record<string, unknown>) {
  const id = String(doc['entryId']);
  return { ...entrySummary(doc), links: { revisions: `/admin/v1/entries/${id}/revisions`, history: `/admin/v1/entries/${id}/history` } };
}

export function revisionSummary(doc: Record<string, unknown>) {
  return {
    id: doc['revisionId'],
    revisionId: doc['revisionId'],
    entryId: doc['entryId'],
    revision: doc['revision'],
    status: doc['status'],
    updatedAt: doc['savedAt'],
    publishAt: doc['publishAt'] ?? null,
    publishedAt: doc['publishedAt'] ?? null,
  };
}

const actor = z.object({ type: z.string(), id: z.string() });
const status = z.enum(REVISION_STATUSES);

export const revisionSummarySchema = z.object({
  id: z.uuid(),
  revisionId: z.uuid(),
  entryId: z.uuid(),
  revision: z.number().int(),
  status,
  updatedAt: z.string().describe('When the revision was saved.'),
  publishAt: z.string().nullable(),
  publishedAt: z.string().nullable(),
});

export const entrySummarySchema = z.object({
  id: z.uuid(),
  slug: z.string(),
  formSetId: z.uuid(),
  previousSlugs: z.array(z.string()),
  importPath: z.string().nullable(),
  external: z.object({ sourceType: z.string().optional(), entityType: z.string().optional(), externalId: z.string() }).nullable(),
  assignee: z.string().nullable(),
  title: z.string().describe('The title field of the latest revision, in the default locale.'),
  latestRevision: z.object({ revisionId: z.uuid(), revision: z.number().int(), status }).nullable(),
  liveRevision: z.object({ revisionId: z.uuid(), revision: z.number().int(), publishedAt: z.string() }).nullable(),
  revisionCount: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  updatedBy: actor.nullable(),
});

export const entryDetailSchema = entrySummarySchema.extend({
  links: z.object({ revisions: z.string(), history: z.string() }).describe('The paged lists of the entry\'s revisions and events.'),
});

export const historyItemSchema = z.object({
  position: z.string(),
  eventId: z.uuid(),
  type: z.string(),
  kind: z.string(),
  actor,
  occurredAt: z.string(),
  revisionId: z.uuid().nullable(),
  revision: z.number().int().nullable(),
});

export const auditItemSchema = historyItemSchema.extend({ streamId: z.string(), entryId: z.uuid().nullable() });

const word = z.object({ op: z.enum(['=', '-', '+']), text: z.string() });
const block = z.object({ type: z.string().describe('The node type, with the heading level: paragraph, heading:2, bulletList, ...'), text: z.string() });

/** GET /entries/{id}/diff: FieldChange and BlockChange of src/domain/content/entry. */
export const diffSchema = z.object({
  entryId: z.uuid(),
  from: z.object({ revisionId: z.uuid(), revision: z.number().int(), status }),
  to: z.object({ revisionId: z.uuid(), revision: z.number().int(), status }),
  changes: z.array(
    z.object({
      field: z.string(),
      locale: z.string().optional().describe('For a field with one value per locale: the locale whose value changed.'),
      kind: z.enum(['added', 'removed', 'changed']),
      before: z.unknown().optional().describe('Absent for added, and for rich text (see blocks).'),
      after: z.unknown().optional().describe('Absent for removed, and for rich text (see blocks).'),
      blocks: z
        .array(
          z.object({
            kind: z.enum(['added', 'removed', 'changed']),
            beforeIndex: z.number().int().optional(),
            afterIndex: z.number().int().optional(),
            before: block.optional(),
            after: block.optional(),
            differences: z.array(z.enum(['text', 'type', 'format'])).optional(),
            words: z.array(word).optional().describe('With a text difference: the block\'s words, unchanged (=), removed (-) and added (+).'),
          }),
        )
        .optional()
        .describe('Rich text (tiptap documents): the blocks added, removed or changed, instead of before and after.'),
    }),
  ),
});

export function reviewItem(doc: Record<string, unknown>) {
  return {
    revisionId: doc['revisionId'],
    revision: doc['revision'],
    status: doc['status'],
    entry: { id: doc['entryId'], slug: doc['entrySlug'], title: doc['title'] },
    formSet: { id: doc['formSetId'], name: doc['formSetName'] ?? null },
    submittedBy: doc['submittedBy'],
    submittedAt: doc['submittedAt'],
    assignee: doc['assignee'] ?? null,
    publishAt: doc['publishAt'] ?? null,
  };
}

export const reviewItemSchema = z.object({
  revisionId: z.uuid(),
  revision: z.number().int(),
  status: z.enum(IN_REVIEW_STATUSES),
  entry: z.object({ id: z.uuid(), slug: z.string(), title: z.string() }),
  formSet: z.object({ id: z.uuid(), name: z.string().nullable() }),
  submittedBy: actor,
  submittedAt: z.string(),
  assignee: z.string().nullable(),
  publishAt: z.string().nullable().describe('Set while scheduled: when the scheduled job publishes it.'),
});
