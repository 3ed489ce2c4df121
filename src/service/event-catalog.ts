import { EventCatalog } from '../event-store/event-catalog.ts';
import { operationsEvents } from '../domain/operations-events.ts';
import { applicationEvents } from '../application/application-events.ts';

/** Every event type the service writes, with its schema and upcasters. */
export function serviceEventCatalog(): EventCatalog {
  return new EventCatalog([...operationsEvents, ...applicationEvents]);
}
