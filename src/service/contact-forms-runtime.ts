import fs from 'node:fs';
import { hkdfSync } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { EventLog } from '../event-store/event-log.ts';
import { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { ReadModelStore } from '../read-models/read-model-store.ts';
import type { ProjectionSupervisor } from '../projection-engine/projection-supervisor.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import { Reservations } from '../application/reservations.ts';
import { Idempotency } from '../application/idempotency.ts';
import { OutboxWorker, type OutboxObserver } from '../outbox/outbox-worker.ts';
import { RateLimiter } from '../security/rate-limiter.ts';
import { SecretBox } from '../security/secret-box.ts';
import { outboundPolicy } from '../security/ssrf-guard.ts';
import { resolveSecretsKey } from '../security/secrets-key.ts';
import { resolveSessionSecret } from '../security/session-secret.ts';
import { WebhookSender } from '../webhooks/webhook-sender.ts';
import { rateLimited } from '../http/errors/error-factory.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import { describeKeyStore, openKeyStore } from '../key-store/open-key-store.ts';
import type { MailTransport } from '../mail/mail-transport.ts';
import { mailConfigFrom, openMailTransport } from '../mail/open-mail-transport.ts';
import type { NoticeJobDoc } from '../../projections/contact-forms.ts';
import { ContactFormService } from '../contact-forms/contact-form-service.ts';
import type { ContactForms } from '../contact-forms/contact-forms.ts';
import { SubmissionService } from '../contact-forms/submission-service.ts';
import { PowChallenges } from '../contact-forms/pow-challenge.ts';
import { noticeOutbox, type NoticeOutcome } from '../contact-forms/notice-outbox.ts';
import type { ChatPoster } from '../outbox/notice-attempts.ts';
import { clientIp } from '../contact-forms/client-ip.ts';
import { reviewNoticeOutbox, type ReviewNoticeOutcome } from '../review-notices/review-notice-outbox.ts';
import type { ReviewNoticeDoc } from '../../projections/review-queue.ts';

/** How long a hosted page's challenge stays valid. */
export const CHALLENGE_TTL_MS = 2 * 60 * 60 * 1000;

export interface ContactFormsOverrides {
  mail?: MailTransport;
  keyStore?: KeyStore;
  chat?: ChatPoster;
}

export async function openContactForms(
  config: Config,
  deps: { log: EventLog; readModels: ReadModelStore; supervisor: ProjectionSupervisor | undefined; watermark: ProjectionWatermark; clock: Clock; logger: Logger; outboxObserver?: OutboxObserver },
  overrides: ContactFormsOverrides = {},
): Promise<ContactForms> {
  const { log, clock, logger } = deps;
  const settings = config.contactForms;
  const keyStore = overrides.keyStore ?? (await openKeyStore(config, { logger }));
  const mail = overrides.mail ?? openMailTransport(mailConfigFrom(settings.smtpUrl, config.dataDir));
  const reader = new ReadModelReader(deps.readModels, { generations: deps.supervisor });
  const { watermark } = deps;
  const secrets = new SecretBox(resolveSecretsKey(config));
  const forms = new ContactFormService({ log, reader, reservations: new Reservations(log), idempotency: new Idempotency(log, { clock }), watermark, clock, secrets, outbound: outboundPolicy(config.outboundAllowlist) });
  const submissions = new SubmissionService({ log, reader, keyStore, watermark, mail, mailFrom: settings.mailFrom, clock, logger });
  const challengeKey = Buffer.from(hkdfSync('sha256', resolveSessionSecret(config), 'annals', 'contact-form-challenge', 32));
  const challenges = new PowChallenges({ key: challengeKey, difficulty: settings.powDifficulty, ttlMs: CHALLENGE_TTL_MS, noJsMinMs: settings.noJsMinSeconds * 1000, clock });
  const limiter = new RateLimiter({ clock, windowMs: 60_000 });
  logger.info({ keyStore: describeKeyStore(config), mail: mail.describe() }, 'contact forms ready');

  let worker: OutboxWorker<NoticeJobDoc & Record<string, unknown>, NoticeOutcome> | undefined;
  let reviewWorker: OutboxWorker<ReviewNoticeDoc & Record<string, unknown>, ReviewNoticeOutcome> | undefined;
  let chatSender: WebhookSender | undefined;
  let stopping: Promise<void> | undefined;
  return {
    forms,
    submissions,
    challenges,
    reader,
    keyStore,
    mail,
    secrets,
    logger,
    settings,
    assertSubmitAllowed(ctx) {
      const decision = limiter.hit(`contact-submit:${clientIp(ctx)}`, settings.submitRateLimit);
      if (!decision.allowed) {
        throw rateLimited(decision.retryAfterSeconds, { message: `Too many contact-form submissions from this address: at most ${settings.submitRateLimit} per 60 seconds.` });
      }
    },
    startWorker(serviceUrl) {
      if (worker) return;
      const consoleBase = settings.consoleUrl ?? `${(serviceUrl ?? defaultOrigin(config)).replace(/\/+$/, '')}/console`;
      let chat = overrides.chat;
      if (!chat) {
        chatSender = new WebhookSender({ policy: outboundPolicy(config.outboundAllowlist), timeoutMs: config.webhooks.timeoutMs, extraCa: readCa(config.webhooks.caFile) });
        chat = chatSender;
      }
      const workerOptions = { log, reader: new ReadModelReader(deps.readModels, { cacheMs: 250, generations: deps.supervisor }), logger, concurrency: 4, pollIntervalMs: 500, ...(deps.outboxObserver ? { observer: deps.outboxObserver } : {}), ...(deps.supervisor ? { commits: deps.supervisor } : {}) };
      const noticeReader = new ReadModelReader(deps.readModels, { cacheMs: 250, generations: deps.supervisor });
      worker = new OutboxWorker(noticeOutbox({ log, reader: noticeReader, keyStore, mail, chat, secrets, mailFrom: settings.mailFrom, consoleBase: () => consoleBase, logger }), workerOptions);
      worker.start();
      reviewWorker = new OutboxWorker(reviewNoticeOutbox({ log, reader: noticeReader, mail, chat, secrets, mailFrom: settings.mailFrom, consoleBase: () => consoleBase }), workerOptions);
      reviewWorker.start();
    },
    stop: () =>
      (stopping ??= (async () => {
        await Promise.all([worker?.stop(), reviewWorker?.stop()]);
        chatSender?.close();
        await Promise.allSettled([mail.close(), keyStore.close()]);
      })()),
  };
}

/** The service's own origin from HOST and PORT, when no listening URL is known (projector-only processes). */
function defaultOrigin(config: Pick<Config, 'host' | 'port'>): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

function readCa(file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
