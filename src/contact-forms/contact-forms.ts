import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import type { MailTransport } from '../mail/mail-transport.ts';
import type { SecretBox } from '../security/secret-box.ts';
import type { ContactFormService } from './contact-form-service.ts';
import type { SubmissionService } from './submission-service.ts';
import type { PowChallenges } from './pow-challenge.ts';

/** Everything contact forms need, built once per process (see src/service/service.ts). */
export interface ContactForms {
  forms: ContactFormService;
  submissions: SubmissionService;
  challenges: PowChallenges;
  reader: ReadModelReader;
  keyStore: KeyStore;
  mail: MailTransport;
  /** Seals and opens chat webhook URLs (SECRETS_KEY). */
  secrets: SecretBox;
  logger: Logger;
  settings: Config['contactForms'];
  /** Counts a submission attempt of the request's client; throws 429 RATE_LIMITED (Retry-After) beyond CONTACT_SUBMIT_RATE_LIMIT per minute. */
  assertSubmitAllowed(ctx: Context): void;
  /**
   * Starts the notice senders (projector role): contact-form notices, and review notices (src/review-notices/),
   * which share the mail transport and the chat sender. `serviceUrl` is the listening URL, for console links
   * when CONSOLE_URL is unset.
   */
  startWorker(serviceUrl?: string): void;
  /** Stops the senders (waiting for notices in flight to be recorded), then closes the key store and the mail transport. */
  stop(): Promise<void>;
}
