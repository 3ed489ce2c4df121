import { z } from 'zod';
import { IN_REVIEW_STATUSES, REVISION_STATUSES } from '../../domain/content/entry/entry-workflow.ts';
import { formSetDefinitionSchema } from '../../domain/content/form-set/form-set-definition.ts';
import { FIELD_TYPES } from '../../domain/content/form-set/field-types.ts';
import { APPROVAL_RULES } from '../../domain/approval-policy.ts';
import { REFUSAL_CODES, REFUSAL_REASONS } from '../../domain/refusal-events.ts';
import { AUDIT_FLAG_KINDS } from '../../audit/audit-flags.ts';

/** The admin API's answers for form sets, entries and revisions, shaped from their read-model documents. */

export const formSetSummarySchema = z.object({
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  version: z.number().int().describe('1 on creation, +1 on every update: send as expectedVersion to update only what you read.'),
}).meta({ id: 'FormSetSummary' });

export const formSetDetailSchema = formSetSummarySchema.extend({
  definition: formSetDefinitionSchema.describe('The fields, blocks, roles and sitemap settings, as stored.'),
}).meta({ id: 'FormSet' });

export function formSetSummary(doc: Record<string, unknown>) {
  return { id: doc['formSetId'], slug: doc['slug'], name: doc['name'], description: doc['description'] ?? null, version: doc['version'] };
}

export function formSetDetail(doc: Record<string, unknown>) {
  return { ...formSetSummary(doc), definition: doc['definition'] };
}

/** GET /form-sets/{id}/schema: what an agent needs to write valid entries. */
export const formSetSchemaSchema = formSetSummarySchema.extend({
  contentLocales: z.object({ locales: z.array(z.string()), defaultLocale: z.string() }),
  fields: z.array(
    z.object({
      key: z.string(),
      type: z.enum(FIELD_TYPES),
      label: z.string(),
      required: z.boolean(),
      localeShared: z.boolean(),
      masterEntityKey: z.string().optional(),
      sampleValues: z.array(z.string()).optional().describe('Select fields: some values of the master behind them.'),
    }),
  ),
  jsonSchema: z.record(z.string(), z.unknown()).describe('The JSON Schema (2020-12) of the fields object of an entry of this form set.'),
}).meta({ id: 'FormSetSchema' });

export const tenantSchemaSchema = z.object({
  projectId: z.uuid(),
  contentLocales: z.object({ locales: z.array(z.string()), defaultLocale: z.string() }),
  formSets: z.array(formSetSchemaSchema),
  masters: z.array(z.object({ id: z.uuid(), key: z.string(), name: z.string(), recordCount: z.number().int(), published: z.boolean() })),
}).meta({ id: 'TenantSchema' });

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
    localeCoverage: doc['locales'] ?? [],
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
    restoredFrom: doc['restoredFrom'] ?? null,
    ...(typeof doc['rejectedReason'] === 'string' ? { rejectedReason: doc['rejectedReason'] } : {}),
  };
}

/** Who did something: a user, an agent key or the system, as events record it. */
export const actorSchema = z.object({ type: z.string(), id: z.string() });
const status = z.enum(REVISION_STATUSES);
/** A revision restored from an older one names it; any other revision has null. */
export const restoredFromSchema = z.object({ revisionId: z.uuid(), revision: z.number().int() }).meta({ id: 'RestoredFrom' });

export const revisionSummarySchema = z.object({
  id: z.uuid(),
  revisionId: z.uuid(),
  entryId: z.uuid(),
  revision: z.number().int(),
  status,
  updatedAt: z.string().describe('When the revision was saved.'),
  publishAt: z.string().nullable(),
  publishedAt: z.string().nullable(),
  restoredFrom: restoredFromSchema.nullable().describe('Set when the revision was made by restoring an older one: that revision; null otherwise.'),
  rejectedReason: z.string().optional().describe('While rejected: the reviewer\'s reason, when one was given.'),
}).meta({ id: 'RevisionSummary' });

/** A revision as creates and saves answer it. */
export const revisionRefSchema = revisionSummarySchema.pick({ id: true, revisionId: true, entryId: true, revision: true, status: true, updatedAt: true }).meta({ id: 'SavedRevision' });

/** POST /form-sets/{id}/entries and POST /entries/{id}/duplicate. */
export const createdEntrySchema = z.object({
  entry: z.object({ id: z.uuid(), slug: z.string(), formSetId: z.uuid() }),
  revision: revisionRefSchema.nullable(),
}).meta({ id: 'CreatedEntry' });

export const revisionDetailSchema = revisionSummarySchema.extend({
  snapshot: z.record(z.string(), z.unknown()).describe('The field values of the revision, by field key.'),
}).meta({ id: 'Revision' });

/** A revision after a workflow transition. */
export const revisionTransitionSchema = revisionSummarySchema.omit({ updatedAt: true, restoredFrom: true }).extend({
  already_published: z.boolean().optional().describe('publish only: true when the revision was live already (nothing changed).'),
}).meta({ id: 'RevisionTransition' });

export const entrySummarySchema = z.object({
  id: z.uuid(),
  slug: z.string(),
  formSetId: z.uuid(),
  previousSlugs: z.array(z.string()),
  importPath: z.string().nullable(),
  external: z.object({ sourceType: z.string().optional(), entityType: z.string().optional(), externalId: z.string() }).nullable(),
  assignee: z.string().nullable(),
  title: z.string().describe('The title field of the latest revision, in the default locale.'),
  localeCoverage: z.array(z.string()).describe('The content locales the latest revision has text in (text, textarea and rich-text values), sorted.'),
  latestRevision: z.object({ revisionId: z.uuid(), revision: z.number().int(), status }).nullable(),
  liveRevision: z.object({ revisionId: z.uuid(), revision: z.number().int(), publishedAt: z.string() }).nullable(),
  revisionCount: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  updatedBy: actorSchema.nullable(),
}).meta({ id: 'EntrySummary' });

export const entryDetailSchema = entrySummarySchema.extend({
  links: z.object({ revisions: z.string(), history: z.string() }).describe('The paged lists of the entry\'s revisions and events.'),
}).meta({ id: 'Entry' });

export const historyItemSchema = z.object({
  position: z.string(),
  eventId: z.uuid(),
  type: z.string(),
  kind: z.string(),
  actor: actorSchema,
  occurredAt: z.string(),
  revisionId: z.uuid().nullable(),
  revision: z.number().int().nullable(),
  restoredFrom: restoredFromSchema.nullable().describe('entry.revision-saved of a restore: the older revision whose values it brought back; null for any other event.'),
  flag: z
    .object({
      kind: z.enum(AUDIT_FLAG_KINDS).describe('approved-while-policy-off: approved or published while a rule of the project\'s usual approval policy was off, which that rule would have refused; write-refused: a write refused by a role, a key\'s scope or the approval policy; publication-refused: a scheduled revision the policy in force refused to publish.'),
      rules: z.array(z.enum(APPROVAL_RULES)).describe('The approval policy rules concerned.'),
    })
    .optional()
    .describe('What the audit log flags of the event; absent when nothing.'),
  refusal: z
    .object({
      operation: z.string().describe('The admin API operation refused (its operationId).'),
      code: z.enum(REFUSAL_CODES),
      reason: z.enum(REFUSAL_REASONS).describe('role: the session\'s role; scope: the agent key\'s scope; policy: the approval policy.'),
      rule: z.enum(APPROVAL_RULES).optional(),
      count: z.number().int().describe('How many refusals the record stands for: 1 for the first of a window, then the further ones of the window counted.'),
      repeated: z.boolean().describe('true: the further refusals of a window (same actor, operation and code), counted.'),
      firstAt: z.string(),
      lastAt: z.string(),
    })
    .optional()
    .describe('A refused write (type write.refused): what was refused, why, and how often.'),
}).meta({ id: 'HistoryItem' });

export const auditItemSchema = historyItemSchema.extend({ streamId: z.string(), entryId: z.uuid().nullable() }).meta({ id: 'AuditItem' });

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
}).meta({ id: 'RevisionDiff' });

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
  submittedBy: actorSchema,
  submittedAt: z.string(),
  assignee: z.string().nullable(),
  publishAt: z.string().nullable().describe('Set while scheduled: when the scheduled job publishes it.'),
}).meta({ id: 'ReviewItem' });
