import { submissionReceived } from '../domain/contact-form/contact-form-events.ts';
import type { KeyStore } from './key-store.ts';

export interface KeyCopyResult {
  /** Keys copied (or found already there). */
  copied: number;
  /** Submissions whose key had been destroyed (erased): erased in the target too. */
  erased: number;
  /** Submissions with no key in the source: they read as erased wherever the log goes. */
  missing: number;
}

/**
 * Copies the keys of the given submissions from one key store to another, with the log they belong to (see
 * `log import --keys-from`): the values in the log stay sealed, so without their keys moved submissions read
 * as erased. An erasure moves as an erasure (the target keeps the tombstone). Idempotent: a rerun puts the
 * same keys again, which the port accepts.
 */
export async function copySubmissionKeys(submissionIds: Iterable<string>, from: KeyStore, to: KeyStore): Promise<KeyCopyResult> {
  const result: KeyCopyResult = { copied: 0, erased: 0, missing: 0 };
  const ids = [...new Set(submissionIds)];
  for (let i = 0; i < ids.length; i += 500) {
    const page = ids.slice(i, i + 500);
    const keys = await from.getMany(page);
    for (const id of page) {
      const key = keys.get(id);
      if (key) {
        await to.put(id, key);
        result.copied += 1;
      } else if (await from.destroyed(id)) {
        await to.destroy(id);
        result.erased += 1;
      } else {
        result.missing += 1;
      }
    }
  }
  return result;
}

/** The submission id of a log event, when it is a received submission. */
export function submissionIdOf(event: { type: string; data: unknown }): string | null {
  if (event.type !== submissionReceived.type) return null;
  const id = (event.data as { submissionId?: unknown } | null)?.submissionId;
  return typeof id === 'string' ? id : null;
}
