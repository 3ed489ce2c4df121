import type { EventLog, PendingEvent } from '../event-store/event-log.ts';
import { NotLeaderError, StreamNotFoundError, UnavailableError, WrongExpectedVersionError } from '../event-store/errors.ts';
import { collect } from '../event-store/event-store.ts';
import { ReadModelUnavailableError } from '../read-models/read-model-store.ts';
import type { MailMessage, MailTransport } from '../mail/mail-transport.ts';

/**
 * Notices (e-mail and chat) sent by an outbox exactly once per event as far as a receiver can tell: an attempt
 * is recorded in the log before each hand-over, on the notice's own attempts stream; a hand-over whose outcome
 * was never recorded (the process died between sending and recording) is followed by one more attempt on
 * restart, with the same Message-ID (the .eml transport writes a Message-ID once, so there it is exactly once);
 * once the attempts are used up without a recorded outcome, the notice is recorded as failed, never sent a third
 * time. Contact-form notices and review notices both go through it.
 */
export const MAX_NOTICE_ATTEMPTS = 2;

/** Posts a chat message (the webhook sender: HTTPS only, SSRF guard at check and connect time, timeout). */
export interface ChatPoster {
  send(url: string, body: Buffer, headers: Record<string, string>, signal?: AbortSignal): Promise<{ ok: boolean; status: number | null; error: string | null }>;
}

/** A concurrent worker claimed the same attempt: leave the notice to it (the outbox leaves it pending). */
export class AttemptClaimedElsewhere extends Error {
  override name = 'AttemptClaimedElsewhere';
}

/**
 * Appends the next attempt of a notice (`attempt(n)` makes its event), or throws: AttemptClaimedElsewhere when
 * another worker appended it first; an Error (recorded as the notice's failure) when the attempts are used up.
 */
export async function recordNoticeAttempt(log: EventLog, stream: string, attempt: (n: number) => PendingEvent, actorId: string): Promise<void> {
  let previous: number;
  try {
    previous = (await collect(log.readStream(stream))).length;
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
    previous = 0;
  }
  if (previous >= MAX_NOTICE_ATTEMPTS) {
    throw new Error(`not sent again: ${previous} earlier attempts were interrupted before their outcome was recorded (the message may have been delivered; its Message-ID is the same each time)`);
  }
  try {
    await log.append(stream, [attempt(previous + 1)], previous === 0 ? 'no_stream' : BigInt(previous - 1), { actor: { type: 'system', id: actorId } });
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) throw new AttemptClaimedElsewhere(`attempt ${previous + 1} of ${stream} was claimed by another worker`);
    throw error;
  }
}

/** Errors after which a notice is left pending and tried again later (a store briefly unavailable, a claim lost). */
export function noticeRetryLater(error: unknown): boolean {
  return (
    error instanceof AttemptClaimedElsewhere ||
    error instanceof ReadModelUnavailableError ||
    error instanceof UnavailableError ||
    error instanceof NotLeaderError ||
    /^Mongo(Network|ServerSelection|NotConnected)/.test((error as Error)?.name ?? '')
  );
}

/** Hands an e-mail notice to the transport; answers what its receipt adds to "sent" (already delivered, refused recipients), or null. */
export async function sendNoticeMail(mail: MailTransport, message: MailMessage): Promise<string | null> {
  const receipt = await mail.send(message);
  const details = [
    receipt.duplicate ? 'already delivered before (same Message-ID); not written again' : null,
    receipt.rejected.length ? `the server refused ${receipt.rejected.length} of ${message.to.length} recipients: ${receipt.rejected.join(', ')}` : null,
  ].filter(Boolean);
  return details.length ? details.join('; ') : null;
}

/** Posts a notice to a Slack-compatible chat webhook ({"text": ...}); answers the HTTP status as its detail; throws when the post failed. */
export async function postChatNotice(chat: ChatPoster, url: string, text: string, signal: AbortSignal): Promise<string | null> {
  const result = await chat.send(url, Buffer.from(JSON.stringify({ text })), { 'Content-Type': 'application/json' }, signal);
  if (!result.ok) throw new Error(`chat notice failed: ${result.error ?? `HTTP ${result.status}`}`);
  return result.status === null ? null : `HTTP ${result.status}`;
}
