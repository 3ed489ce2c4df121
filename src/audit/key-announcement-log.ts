/**
 * Records the key chain's announcements in the log (audit.key-announced on stream `audit-keys`), so that the
 * keys and their validity are part of the history the log's checkpoints commit to and leave the machine
 * with. The chain file stays the source the ring reads: an announcement is recorded once (by its digest),
 * in chain order, by the service at start (projector role) and by `annals audit rotate-key`; another
 * process recording the same at the same time is not an error.
 *
 * The record also gives the chain back where its file is missing (another host of the same log, a file
 * lost): readRecordedKeyChain answers the last chain the log holds. Its announcements prove themselves by
 * their signatures, so a record written by someone without the keys can add nothing that verifies.
 */
import { StreamNotFoundError, WrongExpectedVersionError } from '../event-store/errors.ts';
import type { EventLog } from '../event-store/event-log.ts';
import { AUDIT_KEYS_STREAM, auditKeyAnnounced, type AuditKeyAnnounced } from './audit-events.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { KeyChain, KeyChainError, type KeyAnnouncement } from './key-chain.ts';

/** Appends the announcements of `chain` the log does not hold yet; answers how many it appended. */
export async function recordKeyAnnouncements(log: EventLog, chain: KeyChain): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const recorded = new Set<string>();
    let revision: bigint | 'no_stream' = 'no_stream';
    try {
      for await (const event of log.store.readStream(AUDIT_KEYS_STREAM)) {
        revision = event.revision;
        if (event.type === auditKeyAnnounced.type) recorded.add((event.data as AuditKeyAnnounced).digest);
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    const missing = chain.entries.filter((e) => !recorded.has(e.digest));
    if (missing.length === 0) return 0;
    const events = missing.map((e) => ({
      type: auditKeyAnnounced.type,
      data: {
        sequence: e.statement.sequence,
        keyId: e.statement.keyId,
        validFrom: e.statement.validFrom,
        previousKeyId: e.statement.previous?.keyId ?? null,
        digest: e.digest,
        announcement: e.announcement,
      } satisfies AuditKeyAnnounced,
    }));
    try {
      await log.append(AUDIT_KEYS_STREAM, events, revision, { actor: { type: 'system', id: 'audit' } });
      return events.length;
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError) || attempt > 0) throw error;
    }
  }
}

/**
 * The last key chain the log records: its announcements in log order, a new chain from each first
 * announcement (a chain begun again after a lost key), an announcement that does not extend it skipped.
 * Null when the log records none.
 */
export async function readRecordedKeyChain(store: EventStore): Promise<KeyChain | null> {
  let chain: KeyChain | null = null;
  try {
    for await (const event of store.readStream(AUDIT_KEYS_STREAM)) {
      if (event.type !== auditKeyAnnounced.type) continue;
      const announcement = (event.data as AuditKeyAnnounced).announcement as KeyAnnouncement;
      try {
        chain = (event.data as AuditKeyAnnounced).sequence === 0 || !chain ? KeyChain.verify([announcement]) : chain.extendedWith(announcement);
      } catch (error) {
        if (!(error instanceof KeyChainError)) throw error;
      }
    }
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
  return chain;
}
