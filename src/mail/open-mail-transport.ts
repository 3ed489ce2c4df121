import path from 'node:path';
import { EmlFileTransport } from './eml-file-transport.ts';
import type { MailTransport } from './mail-transport.ts';
import { SmtpTransport } from './smtp-transport.ts';

export type MailConfig = { kind: 'eml-files'; dir: string } | { kind: 'smtp'; url: string };

/** SMTP when SMTP_URL is set, else .eml files in DATA_DIR/mail. */
export function mailConfigFrom(smtpUrl: string | undefined, dataDir: string): MailConfig {
  return smtpUrl ? { kind: 'smtp', url: smtpUrl } : { kind: 'eml-files', dir: path.join(dataDir, 'mail') };
}

export function openMailTransport(config: MailConfig): MailTransport {
  return config.kind === 'smtp' ? new SmtpTransport({ url: config.url }) : new EmlFileTransport(config.dir);
}
