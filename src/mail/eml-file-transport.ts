import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { MailDeliveryError, type MailMessage, type MailReceipt, type MailTransport } from './mail-transport.ts';

/**
 * The embedded mail adapter: every message becomes an RFC 5322 file `<message-id>.eml` in a folder
 * (DATA_DIR/mail), built by nodemailer's stream transport exactly as SMTP would carry it, so any mail
 * client opens it.
 *
 * Written atomically and once: the bytes go to a temporary file that is flushed to disk, then hard-linked
 * under the final name, which fails when the name exists. A reader never sees half a message, and a
 * message sent again after a crash (same Message-ID) is not written twice: `duplicate: true`.
 */
export class EmlFileTransport implements MailTransport {
  readonly #builder = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

  constructor(readonly dir: string) {}

  describe(): string {
    return `.eml files in ${this.dir}`;
  }

  async send(message: MailMessage): Promise<MailReceipt> {
    const info = await this.#builder.sendMail(toNodemailer(message));
    const bytes = info.message as unknown as Buffer;
    const file = path.join(this.dir, emlFileName(message.messageId));
    const receipt = { messageId: message.messageId, accepted: [...message.to], rejected: [] };
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const temporary = path.join(this.dir, `.tmp-${randomUUID()}`);
      const fd = fs.openSync(temporary, 'wx', 0o600);
      try {
        fs.writeSync(fd, bytes);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      try {
        fs.linkSync(temporary, file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { ...receipt, duplicate: true };
        throw error;
      } finally {
        fs.rmSync(temporary, { force: true });
      }
      syncDirectory(this.dir);
      return { ...receipt, duplicate: false };
    } catch (error) {
      throw new MailDeliveryError(`cannot write the message to ${this.dir}: ${(error as Error).message}`);
    }
  }

  async discard(messageIds: readonly string[]): Promise<void> {
    for (const id of messageIds) fs.rmSync(path.join(this.dir, emlFileName(id)), { force: true });
  }

  async verify(): Promise<void> {
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      fs.accessSync(this.dir, fs.constants.W_OK);
    } catch (error) {
      throw new MailDeliveryError(`the mail folder ${this.dir} is not writable: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.#builder.close();
  }
}

/** The file a Message-ID is written to: the id without brackets when it is plain, else its hash. */
export function emlFileName(messageId: string): string {
  const bare = messageId.replace(/^<|>$/g, '');
  return /^[A-Za-z0-9][A-Za-z0-9._@-]{0,200}$/.test(bare) ? `${bare}.eml` : `${createHash('sha256').update(messageId).digest('hex')}.eml`;
}

export function toNodemailer(message: MailMessage) {
  return {
    messageId: message.messageId,
    from: message.from,
    to: message.to,
    ...(message.replyTo ? { replyTo: message.replyTo } : {}),
    subject: message.subject,
    text: message.text,
    ...(message.html === undefined ? {} : { html: message.html }),
    date: message.date,
    headers: message.headers ?? {},
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

function syncDirectory(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Not every platform can fsync a directory; the file itself is on disk.
  }
}
