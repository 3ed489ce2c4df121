import type { EventStore } from '../event-store/event-store.ts';
import type { MailTransport } from '../mail/mail-transport.ts';
import type { ServiceMetrics } from './service-metrics.ts';

/**
 * The event store with its successful appends counted by event type; every other member is the store's
 * own. A proxy rather than a class implementing EventStore, so that the port can grow without this file.
 */
export function countingAppends(store: EventStore, metrics: ServiceMetrics): EventStore {
  const append: EventStore['append'] = async (...args) => {
    const result = await store.append(...args);
    metrics.eventsAppended(args[1].map((e) => e.type));
    return result;
  };
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property) {
      if (property === 'append') return append;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let method = bound.get(property);
      if (!method) bound.set(property, (method = (value as (...args: unknown[]) => unknown).bind(target)));
      return method;
    },
  });
}

/** The mail transport with every message it is handed counted: sent, duplicate (already sent), failed. */
export function countingMail(transport: MailTransport, kind: string, metrics: ServiceMetrics): MailTransport {
  return {
    describe: () => transport.describe(),
    async send(message) {
      try {
        const receipt = await transport.send(message);
        metrics.mailSent(kind, receipt.duplicate ? 'duplicate' : 'sent');
        return receipt;
      } catch (error) {
        metrics.mailSent(kind, 'failed');
        throw error;
      }
    },
    discard: (ids) => transport.discard(ids),
    verify: () => transport.verify(),
    close: () => transport.close(),
  };
}
