import nodemailer, { type Transporter } from 'nodemailer';
import { redactUrl } from '../logging/redact-url.ts';
import { toNodemailer } from './eml-file-transport.ts';
import { MailDeliveryError, type MailMessage, type MailReceipt, type MailTransport } from './mail-transport.ts';

export interface SmtpOptions {
  /** smtp://user:pass@host:587 (STARTTLS when the server offers it) or smtps://user:pass@host:465 (TLS). */
  url: string;
  /** Connect, greeting and socket inactivity timeouts; default 10 s, 10 s, 30 s. */
  timeoutsMs?: { connection?: number; greeting?: number; socket?: number };
}

/**
 * The production mail adapter: SMTP through nodemailer, configured by a connection URL (SMTP_URL). One
 * connection per message (no pool: notices are few, and a message never waits behind another's failure).
 * Nodemailer's own logging is off; errors are re-thrown with the URL's credentials and the password
 * removed from the text, so the password never reaches a log or a delivery record.
 */
export class SmtpTransport implements MailTransport {
  readonly #transporter: Transporter;
  readonly #secrets: string[];
  readonly #where: string;

  constructor(options: SmtpOptions) {
    const url = new URL(options.url);
    this.#secrets = [url.password, decodeURIComponent(url.password), url.username && url.password ? `${url.username}:${url.password}` : ''].filter((s) => s.length >= 3);
    this.#where = `${url.protocol}//${url.host}`;
    this.#transporter = nodemailer.createTransport({
      url: options.url,
      connectionTimeout: options.timeoutsMs?.connection ?? 10_000,
      greetingTimeout: options.timeoutsMs?.greeting ?? 10_000,
      socketTimeout: options.timeoutsMs?.socket ?? 30_000,
      logger: false,
      debug: false,
    } as never);
  }

  describe(): string {
    return `SMTP ${this.#where}`;
  }

  async send(message: MailMessage): Promise<MailReceipt> {
    try {
      const info = await this.#transporter.sendMail(toNodemailer(message));
      return {
        messageId: message.messageId,
        accepted: (info.accepted ?? []).map(String),
        rejected: (info.rejected ?? []).map(String),
        duplicate: false,
      };
    } catch (error) {
      throw new MailDeliveryError(`SMTP delivery via ${this.#where} failed: ${this.#clean(error)}`);
    }
  }

  async discard(): Promise<void> {}

  async verify(): Promise<void> {
    try {
      await this.#transporter.verify();
    } catch (error) {
      throw new MailDeliveryError(`the SMTP server ${this.#where} cannot be used: ${this.#clean(error)}`);
    }
  }

  async close(): Promise<void> {
    this.#transporter.close();
  }

  #clean(error: unknown): string {
    let text = redactUrl(error instanceof Error ? error.message : String(error));
    for (const secret of this.#secrets) text = text.split(secret).join('***');
    return text.length > 500 ? `${text.slice(0, 500)}…` : text;
  }
}
