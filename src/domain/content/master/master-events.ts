import { z } from 'zod';
import { defineEvent } from '../../../event-store/event-catalog.ts';
import { masterKeySchema } from './master-key.ts';
import { masterNameSchema, masterRecordSchema, masterRecordValueSchema } from './master-entity.ts';

/**
 * Master events, on stream `master-${masterId}`. Single-record changes (create_master_record,
 * update_master_record, removal) are fine-grained; update_master_tree replaces the whole record list in
 * one event, since a move can touch many records' parent and order at once. master.published carries
 * what the webhook payload needs (spec section 6: master_entity_key, record_count).
 */
export const masterStreamId = (masterId: string): string => `master-${masterId}`;

const ids = { projectId: z.uuid(), masterId: z.uuid() };

export const masterCreated = defineEvent({
  type: 'master.created',
  version: 1,
  schema: z.object({ ...ids, key: masterKeySchema, name: masterNameSchema, records: z.array(masterRecordSchema) }),
});

export const masterRenamed = defineEvent({
  type: 'master.renamed',
  version: 1,
  schema: z.object({ ...ids, name: masterNameSchema }),
});

export const masterRecordAdded = defineEvent({
  type: 'master.record-added',
  version: 1,
  schema: z.object({ ...ids, record: masterRecordSchema }),
});

export const masterRecordUpdated = defineEvent({
  type: 'master.record-updated',
  version: 1,
  /** The record as it is after the update. */
  schema: z.object({ ...ids, record: masterRecordSchema }),
});

export const masterRecordRemoved = defineEvent({
  type: 'master.record-removed',
  version: 1,
  schema: z.object({ ...ids, value: masterRecordValueSchema }),
});

export const masterRecordsReplaced = defineEvent({
  type: 'master.records-replaced',
  version: 1,
  /** Every record after the change, labels included. */
  schema: z.object({ ...ids, records: z.array(masterRecordSchema) }),
});

export const masterPublished = defineEvent({
  type: 'master.published',
  version: 1,
  schema: z.object({ ...ids, key: masterKeySchema, publishedAt: z.iso.datetime({ offset: true }), recordCount: z.int().min(0) }),
});

export const masterUnpublished = defineEvent({
  type: 'master.unpublished',
  version: 1,
  schema: z.object({ ...ids, key: masterKeySchema }),
});

export const masterEvents = [
  masterCreated,
  masterRenamed,
  masterRecordAdded,
  masterRecordUpdated,
  masterRecordRemoved,
  masterRecordsReplaced,
  masterPublished,
  masterUnpublished,
];

type Of<D extends { type: string; schema: z.ZodType }> = { type: D['type']; data: z.output<D['schema']> };
export type MasterEvent =
  | Of<typeof masterCreated>
  | Of<typeof masterRenamed>
  | Of<typeof masterRecordAdded>
  | Of<typeof masterRecordUpdated>
  | Of<typeof masterRecordRemoved>
  | Of<typeof masterRecordsReplaced>
  | Of<typeof masterPublished>
  | Of<typeof masterUnpublished>;
