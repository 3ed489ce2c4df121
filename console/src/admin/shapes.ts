/** The admin API's answers the administrator and operator pages read (see /admin/v1/openapi.json). */
export const CONTACT_FIELD_TYPES = ['text', 'textarea', 'email', 'url', 'tel', 'number', 'date', 'select', 'radio', 'checkbox', 'boolean', 'multiselect'] as const;
export type ContactFieldType = (typeof CONTACT_FIELD_TYPES)[number];
export const OPTION_TYPES: readonly ContactFieldType[] = ['select', 'radio', 'multiselect'];

export interface ContactField {
  key: string;
  type: ContactFieldType;
  label: string;
  required?: boolean;
  options?: Array<string | { value: string; label?: string }>;
  [other: string]: unknown;
}

export interface ContactFormSettings {
  name: string;
  slug: string;
  notification_emails: string[];
  reply_to_field: string | null;
  honeypot_enabled: boolean;
  honeypot_field: string;
  fields: ContactField[];
  autoreply_enabled: boolean;
  autoreply_to_field: string | null;
  autoreply_subject: Record<string, string>;
  autoreply_body: Record<string, string>;
  email_signature: string | null;
  hosted_page_enabled: boolean;
  chat_webhook_url: string | null;
}

export interface ContactForm extends ContactFormSettings {
  id: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  submitPath: string;
  hostedPagePath: string | null;
}

export interface NoticeDelivery {
  status: 'pending' | 'sent' | 'failed' | 'skipped';
  attempts: number;
  messageId: string | null;
  detail: string | null;
  completedAt: string | null;
}

export interface Submission {
  id: string;
  formId: string;
  receivedAt: string;
  locale: string;
  read: boolean;
  erased: boolean;
  erasedAt: string | null;
  values: Record<string, unknown> | null;
  notes: Array<{ id: string; text: string | null; addedAt: string; author: { type: string; id: string } }>;
  deliveries: Record<string, NoticeDelivery>;
}

export const WEBHOOK_EVENTS = ['entry.published', 'entry.updated', 'entry.deleted', 'master.published'] as const;

export interface Webhook {
  id: string;
  name: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export type DeliveryStatus = 'pending' | 'in_progress' | 'succeeded' | 'failed' | 'skipped';

export interface DeliveryAttempt {
  id: string;
  number: number;
  trigger: 'event' | 'redelivery' | 'test';
  state: 'in_progress' | 'succeeded' | 'failed' | 'interrupted';
  timestamp: string;
  finishedAt: string | null;
  url: string;
  payload: string;
  httpStatus: number | null;
  durationMs: number | null;
  responseBody: string | null;
  responseTruncated: boolean;
  error: string | null;
  headers: Record<string, string>;
}

export interface Delivery {
  id: string;
  webhookId: string;
  event: string;
  trigger: 'event' | 'test';
  status: DeliveryStatus;
  createdAt: string;
  payload: string | null;
  attemptCount: number;
  notSent: { reason: string; detail: string } | null;
  attempts: DeliveryAttempt[];
}

export interface ConsoleUser {
  id: string;
  email: string;
  role: 'tenant_admin' | 'tenant_user';
  disabled: boolean;
  createdAt: string;
}

export interface ApiKey {
  id: string;
  type: 'agent' | 'public';
  prefix: string;
  scope: 'full' | 'content' | 'schema' | null;
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
  /** Agent keys: when the key last authenticated a request (to 10 minutes); null when never. */
  lastUsedAt: string | null;
}

/** Plans in order; features name the first plan that has them (spec section 8). */
export const PLANS = ['free', 'solo', 'standard', 'business', 'enterprise'] as const;
export function planAtLeast(plan: string, needed: (typeof PLANS)[number]): boolean {
  return PLANS.indexOf(plan as (typeof PLANS)[number]) >= PLANS.indexOf(needed);
}
