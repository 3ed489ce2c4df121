import { EventCatalog } from '../event-store/event-catalog.ts';
import { operationsEvents } from '../domain/operations-events.ts';
import { applicationEvents } from '../application/application-events.ts';
import { accessEvents } from '../domain/access/access-events.ts';
import { entryEvents, entryRevisionApprovalRefused } from '../domain/content/entry/entry-events.ts';
import { formSetEvents } from '../domain/content/form-set/form-set-events.ts';
import { masterEvents } from '../domain/content/master/master-events.ts';
import { mediaEvents } from '../domain/media/media-events.ts';
import { webhookEvents } from '../domain/webhook/webhook-events.ts';
import { contactFormEvents } from '../domain/contact-form/contact-form-events.ts';
import { auditEvents } from '../audit/audit-events.ts';
import { reviewNoticeEvents } from '../domain/review-notice/review-notice-events.ts';
import { refusalEvents } from '../domain/refusal-events.ts';

/** Every event type the service writes, with its schema and upcasters. */
export function serviceEventCatalog(): EventCatalog {
  return new EventCatalog([...operationsEvents, ...applicationEvents, ...accessEvents, ...formSetEvents, ...entryEvents, entryRevisionApprovalRefused, ...masterEvents, ...mediaEvents, ...webhookEvents, ...contactFormEvents, ...reviewNoticeEvents, ...auditEvents, ...refusalEvents]);
}
