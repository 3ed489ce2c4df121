import type { WebhookEventType } from './webhook-events.ts';

/**
 * The bodies of spec section 6, without field values. The fields are fixed when the content event is
 * folded (the slugs as they were then); the timestamp is the delivery time, added when the first attempt
 * is made, and those bytes are what every later attempt of the delivery sends again.
 */
export interface EntryPayloadFields {
  event: 'entry.published' | 'entry.updated' | 'entry.deleted' | 'entry.submitted' | 'entry.rejected' | 'entry.scheduled';
  project_id: string;
  form_set_slug: string;
  entry_slug: string;
  entry_id: string;
  /**
   * Present only when there is a published revision (for entry.deleted: the one that was live); for the review
   * additions, the revision submitted, rejected or scheduled.
   */
  revision_id?: string;
  /** entry.scheduled only: when the revision will be published (ISO 8601, milliseconds). */
  publish_at?: string;
}

export interface MasterPayloadFields {
  event: 'master.published';
  project_id: string;
  master_entity_id: string;
  master_entity_key: string;
  record_count: number;
}

/**
 * approval-policy.changed: the project's approval policy after the change and before it, and who changed it (a
 * console user by user id, an operator by name). Flat, like the spec's payloads.
 */
export interface PolicyPayloadFields {
  event: 'approval-policy.changed';
  project_id: string;
  human_approval: boolean;
  four_eyes: boolean;
  previous_human_approval: boolean;
  previous_four_eyes: boolean;
  changed_by_type: string;
  changed_by_id: string;
}


/** A signed checkpoint of the whole log (C2SP tlog-checkpoint note), to whichever project's webhook subscribed. */
export interface CheckpointPayloadFields {
  event: 'log.checkpoint';
  project_id: string;
  tree_size: number;
  root_hash: string;
  /** The signed note: verify it with the log's vkey (annals audit log-key). */
  note: string;
  signed_at: string;
}

export type PayloadFields = EntryPayloadFields | MasterPayloadFields | PolicyPayloadFields | CheckpointPayloadFields;

/** The exact body: the spec's fields in the spec's order, then the timestamp (ISO 8601 UTC, milliseconds). */
export function serializePayload(fields: PayloadFields, timestamp: Date): string {
  const time = timestamp.toISOString();
  if (fields.event === 'log.checkpoint') {
    const { event, project_id, tree_size, root_hash, note, signed_at } = fields;
    return JSON.stringify({ event, project_id, tree_size, root_hash, note, signed_at, timestamp: time });
  }
  if (fields.event === 'master.published') {
    const { event, project_id, master_entity_id, master_entity_key, record_count } = fields;
    return JSON.stringify({ event, project_id, master_entity_id, master_entity_key, record_count, timestamp: time });
  }
  if (fields.event === 'approval-policy.changed') {
    const { event, project_id, human_approval, four_eyes, previous_human_approval, previous_four_eyes, changed_by_type, changed_by_id } = fields;
    return JSON.stringify({ event, project_id, human_approval, four_eyes, previous_human_approval, previous_four_eyes, changed_by_type, changed_by_id, timestamp: time });
  }
  const { event, project_id, form_set_slug, entry_slug, entry_id, revision_id, publish_at } = fields;
  return JSON.stringify({
    event,
    project_id,
    form_set_slug,
    entry_slug,
    entry_id,
    ...(revision_id === undefined ? {} : { revision_id }),
    ...(publish_at === undefined ? {} : { publish_at }),
    timestamp: time,
  });
}

const NIL = '00000000-0000-0000-0000-000000000000';

/** Send Test's dummy payload fields for an event type: the right shape, the project's id, nil ids and test slugs. */
export function testPayloadFields(event: WebhookEventType, projectId: string): PayloadFields {
  if (event === 'master.published') {
    return { event, project_id: projectId, master_entity_id: NIL, master_entity_key: 'test-master', record_count: 0 };
  }
  if (event === 'approval-policy.changed') {
    return { event, project_id: projectId, human_approval: false, four_eyes: true, previous_human_approval: false, previous_four_eyes: false, changed_by_type: 'user', changed_by_id: NIL };
  }
  if (event === 'log.checkpoint') {
    return { event, project_id: projectId, tree_size: 0, root_hash: '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=', note: 'test\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n', signed_at: '2000-01-01T00:00:00.000Z' };
  }
  return {
    event,
    project_id: projectId,
    form_set_slug: 'test-form-set',
    entry_slug: 'test-entry',
    entry_id: NIL,
    ...(event === 'entry.deleted' ? {} : { revision_id: NIL }),
    ...(event === 'entry.scheduled' ? { publish_at: '2000-01-01T00:00:00.000Z' } : {}),
  };
}
