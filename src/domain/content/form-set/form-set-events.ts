import { z } from 'zod';
import { defineEvent } from '../../../event-store/event-catalog.ts';
import { formSetDefinitionSchema } from './form-set-definition.ts';

/**
 * Form set events. Coarse on purpose: every change carries the full definition, so a projection never
 * has to replay field-level edits, and the definition's version (1 on creation, +1 per update) keys the
 * compiled entry-field validators. Removing a block or a field is a form-set.updated whose
 * removedFieldKeys/removedBlockIds name what went, for the audit trail. Actor and time are in the
 * event metadata.
 */
export const formSetStreamId = (formSetId: string): string => `form-set-${formSetId}`;

export const formSetCreated = defineEvent({
  type: 'form-set.created',
  version: 1,
  schema: z.object({
    projectId: z.uuid(),
    version: z.literal(1),
    definition: formSetDefinitionSchema,
  }),
});

export const formSetUpdated = defineEvent({
  type: 'form-set.updated',
  version: 1,
  schema: z.object({
    projectId: z.uuid(),
    version: z.int().min(2),
    /** The full definition after the update. */
    definition: formSetDefinitionSchema,
    /** Fields and blocks the update deleted (empty when it deleted none). */
    removedFieldKeys: z.array(z.string()),
    removedBlockIds: z.array(z.string()),
  }),
});

export const formSetDeleted = defineEvent({
  type: 'form-set.deleted',
  version: 1,
  schema: z.object({
    projectId: z.uuid(),
    formSetId: z.uuid(),
    /** The slug it had, now free again. */
    slug: z.string(),
  }),
});

export const formSetEvents = [formSetCreated, formSetUpdated, formSetDeleted];

export type FormSetCreated = { type: 'form-set.created'; data: z.output<typeof formSetCreated.schema> };
export type FormSetUpdated = { type: 'form-set.updated'; data: z.output<typeof formSetUpdated.schema> };
export type FormSetDeleted = { type: 'form-set.deleted'; data: z.output<typeof formSetDeleted.schema> };
export type FormSetEvent = FormSetCreated | FormSetUpdated | FormSetDeleted;
