/**
 * The service as `npm start` runs it, except that its mail transport stops the process dead right after a
 * message was handed over and before the outcome can be recorded: each send prints `SENT <Message-ID>` and
 * then never returns. The test kills the process with SIGKILL at that moment, the crash between send and
 * record that test/contact-forms/crash-once.test.ts is about.
 */
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { systemClock } from '../../src/clock.ts';
import { startService } from '../../src/service/service.ts';
import { mailConfigFrom, openMailTransport } from '../../src/mail/open-mail-transport.ts';
import type { MailTransport } from '../../src/mail/mail-transport.ts';

const config = loadConfig();
const inner = openMailTransport(mailConfigFrom(config.contactForms.smtpUrl, config.dataDir));
const mail: MailTransport = {
  describe: () => inner.describe(),
  verify: () => inner.verify(),
  discard: (ids) => inner.discard(ids),
  close: () => inner.close(),
  async send(message) {
    await inner.send(message);
    process.stdout.write(`SENT ${message.messageId}\n`);
    return new Promise(() => undefined);
  },
};
await startService(config, { logger: createLogger({ level: config.logLevel }), clock: systemClock, contactForms: { mail } });
