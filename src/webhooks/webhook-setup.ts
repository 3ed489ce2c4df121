import fs from 'node:fs';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import { SecretBox } from '../security/secret-box.ts';
import { outboundPolicy } from '../security/ssrf-guard.ts';
import { resolveSecretsKey } from '../security/secrets-key.ts';
import type { OutboxObserver, OutboxWorkerOptions } from '../outbox/outbox-worker.ts';
import { WebhookDispatcher } from './webhook-dispatcher.ts';
import { WebhookSender } from './webhook-sender.ts';
import { WebhookService } from './webhook-service.ts';

/** The admin side of webhooks (API role), from the settings. */
export function webhookServiceFor(config: Config, deps: { log: EventLog; reader: ReadModelReader; watermark: ProjectionWatermark; clock: Clock }): WebhookService {
  return new WebhookService({ ...deps, box: new SecretBox(resolveSecretsKey(config)), policy: outboundPolicy(config.outboundAllowlist) });
}

/** The dispatcher (projector role), from the settings; started. Fails at start-up when WEBHOOK_CA_FILE cannot be read. */
export function startWebhookDispatcher(config: Config, deps: { log: EventLog; reader: ReadModelReader; clock: Clock; logger: Logger; observer?: OutboxObserver; commits?: OutboxWorkerOptions['commits'] }): WebhookDispatcher {
  const { timeoutMs, caFile, concurrency, concurrencyPerWebhook } = config.webhooks;
  let extraCa: string | undefined;
  if (caFile !== undefined) {
    try {
      extraCa = fs.readFileSync(caFile, 'utf8');
    } catch (error) {
      throw new Error(`WEBHOOK_CA_FILE ${caFile} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (!extraCa.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`WEBHOOK_CA_FILE ${caFile} holds no PEM certificate`);
  }
  const policy = outboundPolicy(config.outboundAllowlist);
  const sender = new WebhookSender({ policy, timeoutMs, extraCa, maxSockets: concurrency });
  const dispatcher = new WebhookDispatcher({ ...deps, box: new SecretBox(resolveSecretsKey(config)), sender, concurrency, concurrencyPerWebhook });
  dispatcher.start();
  return dispatcher;
}
