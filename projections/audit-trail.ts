import { defineProjection } from '../src/projection-engine/projection.ts';
import { auditIndexEntryOf, auditRecordId } from '../src/audit/audit-record.ts';

/**
 * One audit record per event: who did what to which stream, when, and as part of which request.
 * Holds no event data (that stays in the log, where revisions and diffs are read) beyond what it is
 * filed and shown by: the project (metadata `projectId`, stamped by the event log from the event's data) for the project audit log, and the
 * revision an event names (`subject`: revisionId and number) for an entry's history. This is the index
 * an auditor searches by project (then actor and time) or stream.
 *
 * Version 2 added projectId, subject and occurredAtMs (the time as a number, so a query can bound the
 * time from both sides: occurredAt from below, occurredAtMs from above) and the by_project indexes.
 * Version 3 dropped the global by_time and by_actor indexes: every audit query is scoped to a project
 * (the project log) or a stream (an entry's history), and each index costs every write.
 * Version 4 dropped by_correlation: no query reads by correlation id, which today names the append that wrote
 * an event (the events one decision wrote, such as entry.created with its first revision; the appends of a
 * bootstrap), not a whole request. It cost 0.45 KB per entry of disk and a write to every audit record.
 * Records still carry the id, for when a correlation names more (a request id carried into the log).
 * Records may carry `flag` (src/audit/audit-flags.ts: an approval made while a rule of the usual approval policy
 * was off, a refused write, a publication the policy refused) and, for a refused write, `refusal` (operation,
 * code, reason, rule, how many refusals it stands for). Only events written since they exist carry what they are
 * read from (and the flag of a legacy entry.revision-approval-refused is left to its type), so records folded
 * before them are what this code folds from the same events: no rebuild.
 * Version 5 added `restoredFrom` (revisionId and number) to the record of an entry.revision-saved that restored an
 * older revision, so an entry's history can say "restored from revision N". Restores have named their source in
 * the event since the first schema, so records folded before version 5 lack what the same events now give: rebuilt.
 * Version 6 keeps only what a record is found by (src/audit/audit-record.ts, AuditIndexEntry: stream, project,
 * actor id, time as a number), keyed by the event's log position; reads take the events at the positions of a
 * page from the log (EventStore.readAt) and make their records with the same pure function this fold files
 * them with. The copies of the log's metadata it held were 0.43 KB a record, 2.6 KB an entry of the bench's
 * seed; by_stream is ordered by the key (the position) and the time indexes by the number, not its text.
 * Version 7 keys records by auditRecordId (the position in 2 to 21 characters that sort as it does), not the
 * zero-padded 20.
 */
export const auditTrail = defineProjection({
  name: 'audit-trail',
  version: 7,
  description: 'Every event filed for the audit log and entry histories by stream, project, actor and time; the records are the events, read from the log by position.',
  collections: {
    records: {
      indexes: [
        // An entry's history: its stream's records in log order (the document id is the position).
        { name: 'by_stream', fields: [['streamId', 1]] },
        { name: 'by_project_time', fields: [['projectId', 1], ['occurredAtMs', 1]] },
        { name: 'by_project_actor_time', fields: [['projectId', 1], ['actorId', 1], ['occurredAtMs', 1]] },
      ],
    },
  },
  apply(event, view) {
    // An event without an actor or a time stops the projection (auditIndexEntryOf throws), so that an operator
    // looks at it and decides (skip records the decision, with a reason, in the log).
    view.put('records', auditRecordId(event.position), auditIndexEntryOf(event));
  },
});
