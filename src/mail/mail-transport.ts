/**
 * The mail port: hands one finished message to whatever delivers mail. Adapters: .eml files in a folder
 * (the embedded default, src/mail/eml-file-transport.ts) and SMTP (src/mail/smtp-transport.ts); both pass
 * test/mail/mail-transport.conformance.ts.
 *
 * A message carries its own Message-ID (the sender makes it deterministic per submission and notice), so
 * a message sent twice after a crash is recognisably the same message. The .eml adapter goes further: it
 * writes each Message-ID once (`duplicate: true` the second time, nothing written).
 */
export interface MailMessage {
  /** `<local@domain>`: set as the Message-ID header. */
  messageId: string;
  from: string;
  to: string[];
  replyTo?: string | undefined;
  subject: string;
  text: string;
  html?: string | undefined;
  date: Date;
  /** Extra headers (X-…); never user input. */
  headers?: Record<string, string>;
}

export interface MailReceipt {
  messageId: string;
  accepted: string[];
  rejected: string[];
  /** The adapter knew the message was delivered before and did nothing (the .eml adapter only). */
  duplicate: boolean;
}

export interface MailTransport {
  /** For logs: where mail goes, credentials hidden. */
  describe(): string;
  send(message: MailMessage): Promise<MailReceipt>;
  /** Forgets the stored copies of these messages where the adapter keeps any (.eml files); SMTP: nothing. */
  discard(messageIds: readonly string[]): Promise<void>;
  /** Checks the transport can deliver (folder writable; SMTP server reachable and accepting the login). */
  verify(): Promise<void>;
  close(): Promise<void>;
}

/** Delivery failed; the message names the server or folder and the reason, never a password. */
export class MailDeliveryError extends Error {
  override name = 'MailDeliveryError';
}
