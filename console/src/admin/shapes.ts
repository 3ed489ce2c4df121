import type { AdminSchema } from '@annals/client';

/**
 * The admin API's answers as the administrator and operator pages read them: the typed client's shapes,
 * generated from the service's OpenAPI document (/admin/v1/openapi.json), named as the pages speak of
 * them. Nothing here is written by hand but the lists of choices a page offers, and each of those is
 * checked against the API's enum in both directions (a choice the API lacks, or one it gained, does not
 * compile).
 */
export type ContactForm = AdminSchema<'ContactForm'>;
export type ContactField = ContactForm['fields'][number];
export type ContactFieldType = ContactField['type'];
/** What the form editor edits: a contact form without what the service sets. */
export type ContactFormSettings = Omit<ContactForm, 'id' | 'version' | 'createdAt' | 'updatedAt' | 'submitPath' | 'hostedPagePath'>;
export type Submission = AdminSchema<'ContactSubmission'>;
export type NoticeDelivery = Submission['deliveries'][string];

export type Webhook = AdminSchema<'Webhook'>;
/** A new webhook, with its signing secret (shown once). */
export type CreatedWebhook = AdminSchema<'CreatedWebhook'>;
export type WebhookEvent = Webhook['events'][number];
export type Delivery = AdminSchema<'WebhookDelivery'>;
export type DeliveryStatus = Delivery['status'];

export type ConsoleUser = AdminSchema<'UserSummary'>;
export type UserRole = ConsoleUser['role'];
export type ApiKey = AdminSchema<'KeySummary'>;
export type KeyScope = NonNullable<ApiKey['scope']>;
/** A new key, with the key itself (shown once). */
export type IssuedKey = AdminSchema<'IssuedKey'>;

export type Plan = AdminSchema<'ProjectOverview'>['plan'];
export type LoginAppearance = AdminSchema<'LoginAppearance'>;
export type IpAllowlistEntry = AdminSchema<'IpAllowlistEntry'>;
export type FormSet = AdminSchema<'FormSet'>;

export type ProjectionStatus = AdminSchema<'ProjectionStatus'>;
/** The event a projection is paused on; its id, stream and message are null unless the caller is an operator. */
export type FailingEvent = AdminSchema<'FailingEvent'>;

/** The members of a string enum in the order written, checked to be every member and nothing else. */
function every<T extends string>(members: Record<T, true>): T[] {
  return Object.keys(members) as T[];
}

export const CONTACT_FIELD_TYPES = every<ContactFieldType>({ text: true, textarea: true, email: true, url: true, tel: true, number: true, date: true, select: true, radio: true, checkbox: true, boolean: true, multiselect: true });
/** The field types that take options (the service refuses options on any other). */
export const OPTION_TYPES: readonly ContactFieldType[] = ['select', 'radio', 'multiselect'];

export const WEBHOOK_EVENTS = every<WebhookEvent>({ 'entry.published': true, 'entry.updated': true, 'entry.deleted': true, 'entry.submitted': true, 'entry.rejected': true, 'entry.scheduled': true, 'master.published': true, 'approval-policy.changed': true, 'log.checkpoint': true });
/** The delivery statuses, in the order the history's filter offers them. */
export const DELIVERY_STATUSES = every<DeliveryStatus>({ failed: true, succeeded: true, pending: true, in_progress: true, skipped: true });

export const USER_ROLES = every<UserRole>({ tenant_user: true, tenant_admin: true });
export const KEY_SCOPES = every<KeyScope>({ full: true, content: true, schema: true });

/** Plans in order; features name the first plan that has them (spec section 8). */
export const PLANS = every<Plan>({ free: true, solo: true, standard: true, business: true, enterprise: true });
export function planAtLeast(plan: Plan, needed: Plan): boolean {
  return PLANS.indexOf(plan) >= PLANS.indexOf(needed);
}
