import { randomBytes } from 'node:crypto';
import { SecretBox } from '../security/secret-box.ts';
import type { SubmittedValues } from '../domain/contact-form/submission-values.ts';
import { KEY_BYTES } from '../key-store/key-store.ts';

/**
 * Sealing a submission's personal data under its own key (AES-256-GCM through SecretBox: a random 96-bit
 * nonce per seal, a 128-bit tag). The context bound as additional data names the submission and what is
 * sealed, so a sealed value copied onto another submission or from a note into the values does not open.
 */
export function newSubmissionKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

export function sealValues(key: Buffer, submissionId: string, values: SubmittedValues): string {
  return new SecretBox(key).seal(JSON.stringify(values), `contact-submission:${submissionId}:values`);
}

export function openValues(key: Buffer, submissionId: string, sealed: string): SubmittedValues {
  return JSON.parse(new SecretBox(key).open(sealed, `contact-submission:${submissionId}:values`)) as SubmittedValues;
}

export function sealNote(key: Buffer, submissionId: string, noteId: string, text: string): string {
  return new SecretBox(key).seal(text, `contact-submission:${submissionId}:note:${noteId}`);
}

export function openNote(key: Buffer, submissionId: string, noteId: string, sealed: string): string {
  return new SecretBox(key).open(sealed, `contact-submission:${submissionId}:note:${noteId}`);
}
