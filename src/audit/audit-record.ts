import { encodePosition } from '../event-store/position.ts';
import type { Actor, RecordedEvent } from '../event-store/event-store.ts';
import { auditFlagOf, type AuditFlag } from './audit-flags.ts';

/**
 * What the audit log and an entry's history say of one event, from the event alone (pure): who did what to
 * which stream, when, as part of which append, the revision it names, and what it flags. The audit-trail
 * projection stores only what these are found by (AuditIndexEntry); reads take the events at the positions
 * it gives from the log and make their records here, so that no read model holds a copy of the log.
 */
export interface AuditRecord {
  position: string;
  eventId: string;
  streamId: string;
  revision: number;
  type: string;
  /** The project (metadata `projectId`, stamped by the event log from the event's data); null for events of none. */
  projectId: string | null;
  /** The revision the event names (revision events, and the subject of a refused write). */
  subject?: RevisionRef;
  /** entry.revision-saved of a restore: the older revision whose values it brought back. */
  restoredFrom?: RevisionRef;
  flag?: AuditFlag;
  /** A refused write: the operation, code, reason, rule and how many refusals it stands for. */
  refusal?: Record<string, unknown>;
  actor: Actor;
  occurredAt: string;
  occurredAtMs: number;
  correlationId: string;
  causationId: string | null;
  idempotencyKey?: string;
}

export interface RevisionRef {
  revisionId: string;
  revision: number;
}

/**
 * What the audit trail files each event by (its document, keyed by the event's log position): the stream (an
 * entry's history), the project, the actor and the time as a number (the project's audit log, newest first,
 * bounded from both sides). Nothing else: the rest is the event's, read from the log.
 */
// A type, not an interface, so that it is a read-model document as it is.
export type AuditIndexEntry = {
  streamId: string;
  projectId: string | null;
  actorId: string;
  occurredAtMs: number;
};

/**
 * The id of an event's audit record: its log position in decimal, after one character saying how many digits it
 * has (base 36: '1' to 'k'), so that ids sort as positions do (fewer digits first, then digit by digit) in 2 to
 * 21 characters: 6 for the 60,000th event, where the 20 of a zero-padded position are stored five times over (the
 * record, its key and three indexes: 0.42 KB an entry of the bench's seed).
 */
export function auditRecordId(position: bigint): string {
  if (position < 0n) throw new RangeError(`position out of range: ${position}`);
  const digits = position.toString();
  return `${digits.length.toString(36)}${digits}`;
}

/** The log position an audit record's id names (auditRecordId); RangeError for anything else. */
export function positionOfAuditRecordId(id: string): bigint {
  const digits = id.slice(1);
  if (!/^(0|[1-9]\d{0,19})$/.test(digits) || id[0] !== digits.length.toString(36)) throw new RangeError(`not an audit record id: ${JSON.stringify(id.slice(0, 30))}`);
  return BigInt(digits);
}

/** An event the audit trail cannot file: it names no actor or no time. */
export class UnfileableEventError extends Error {
  override name = 'UnfileableEventError';
}

/**
 * The event's audit record. Who and when are what a record is filed by: an event without them (written by
 * another tool) throws UnfileableEventError. Only revision events and refused writes have their data read.
 */
export function auditRecordOf(event: RecordedEvent): AuditRecord {
  const { actor, occurredAt, occurredAtMs } = filedBy(event);
  const refused = event.type === 'write.refused';
  const data = (event.type.startsWith('entry.revision-') || refused) && event.data !== null && typeof event.data === 'object' ? (event.data as Record<string, unknown>) : {};
  // A refusal names its revision in its subject.
  const named = refused && data['subject'] !== null && typeof data['subject'] === 'object' ? (data['subject'] as Record<string, unknown>) : data;
  const subject = revisionRefOf(named);
  const restoredFrom = event.type === 'entry.revision-saved' ? revisionRefOf(data['restoredFrom']) : null;
  const flag = event.type === 'entry.revision-approval-refused' ? null : auditFlagOf(event.type, data);
  const refusal = refused
    ? {
        operation: data['operation'],
        code: data['code'],
        reason: data['reason'],
        ...(data['rule'] === undefined ? {} : { rule: data['rule'] }),
        count: data['count'],
        repeated: data['repeated'],
        firstAt: data['firstAt'],
        lastAt: data['lastAt'],
      }
    : null;
  return {
    position: encodePosition(event.position),
    eventId: event.id,
    streamId: event.streamId,
    revision: Number(event.revision),
    type: event.type,
    projectId: event.metadata.projectId ?? null,
    ...(subject === null ? {} : { subject }),
    ...(restoredFrom === null ? {} : { restoredFrom }),
    ...(flag === null ? {} : { flag }),
    ...(refusal === null ? {} : { refusal }),
    actor,
    occurredAt,
    occurredAtMs,
    correlationId: event.metadata.correlationId,
    causationId: event.metadata.causationId,
    ...(event.metadata.idempotencyKey === undefined ? {} : { idempotencyKey: event.metadata.idempotencyKey }),
  };
}

/** What the audit trail stores of the event's record (UnfileableEventError as auditRecordOf); its data is never read. */
export function auditIndexEntryOf(event: RecordedEvent): AuditIndexEntry {
  const { actor, occurredAtMs } = filedBy(event);
  return { streamId: event.streamId, projectId: event.metadata.projectId ?? null, actorId: actor.id, occurredAtMs };
}

/** Who and when: what every record is filed by. */
function filedBy(event: RecordedEvent): { actor: Actor; occurredAt: string; occurredAtMs: number } {
  const { actor, occurredAt } = event.metadata ?? {};
  const occurredAtMs = typeof occurredAt === 'string' ? Date.parse(occurredAt) : Number.NaN;
  if (typeof actor?.type !== 'string' || typeof actor.id !== 'string' || Number.isNaN(occurredAtMs)) {
    throw new UnfileableEventError(`event ${event.id} (${event.type}) has no actor or time in its metadata: an audit record names both`);
  }
  return { actor, occurredAt, occurredAtMs };
}

/** A revision named by an event ({revisionId, revision}), or null when the value is not one. */
function revisionRefOf(value: unknown): RevisionRef | null {
  if (value === null || typeof value !== 'object') return null;
  const { revisionId, revision } = value as Record<string, unknown>;
  return typeof revisionId === 'string' && typeof revision === 'number' ? { revisionId, revision } : null;
}
