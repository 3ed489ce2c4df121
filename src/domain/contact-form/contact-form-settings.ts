import { z } from 'zod';
import { formSetSlugSchema } from '../content/form-set/form-set-slug.ts';
import { FIELD_KEY_PATTERN } from '../content/form-set/form-set-definition.ts';
import { isLocaleCode, type ContentLocales } from '../content/form-set/locale-code.ts';
import { joinPath, problem, problemsError, type Problem } from '../content/form-set/problems.ts';
import { zodProblems } from '../content/form-set/zod-problems.ts';
import { contactFieldSchema, fieldRuleProblems, MAX_CONTACT_FIELDS, type ContactField } from './contact-form-fields.ts';

/**
 * A contact form's settings (spec section 2, the contact form table), named as the spec names them:
 *
 * | setting | spec |
 * |---|---|
 * | name, slug | display name; URL-safe API identifier (unique per project) |
 * | notification_emails | "notification emails": recipients of submission notices |
 * | reply_to_field | "reply-to field": an email field whose value becomes the notice's Reply-To |
 * | honeypot_enabled, honeypot_field | "spam protection: honeypot field on/off"; the field name, default `website` |
 * | fields | key, type, label, required, options, limits |
 * | autoreply_enabled, autoreply_to_field | on/off; the email field holding the submitter's address |
 * | autoreply_subject, autoreply_body | per locale (a plain string is the project's default locale's) |
 * | email_signature | optional, appended to the autoreply |
 * | hosted_page_enabled | the hosted contact page and iframe embed (spec section 4.2) |
 * | chat_webhook_url | optional Slack-compatible incoming-webhook URL (https; Standard plan and above) |
 *
 * Autoreply subject and body may name submitted values as `{{field_key}}`; each is replaced by the value
 * (HTML-escaped in the HTML part). Everything here is checked at once and every problem is named.
 */
export const HONEYPOT_DEFAULT_FIELD = 'website';
export const MAX_NOTIFICATION_EMAILS = 20;
export const NAME_MAX_LENGTH = 200;
export const SUBJECT_MAX_LENGTH = 300;
export const BODY_MAX_LENGTH = 20_000;
export const SIGNATURE_MAX_LENGTH = 2000;
export const CHAT_URL_MAX_LENGTH = 2048;

/** Text per locale: `{en: '...', ja: '...'}`. */
export type LocalizedText = Record<string, string>;

/** A chat webhook URL as stored: sealed (it is a credential), with a display form that hides its path. */
export interface ChatWebhookRef {
  sealedUrl: string;
  /** `https://hooks.slack.com/…`: scheme and host only. */
  display: string;
}

export interface ContactFormSettings {
  slug: string;
  name: string;
  notification_emails: string[];
  reply_to_field: string | null;
  honeypot_enabled: boolean;
  honeypot_field: string;
  fields: ContactField[];
  autoreply_enabled: boolean;
  autoreply_to_field: string | null;
  autoreply_subject: LocalizedText;
  autoreply_body: LocalizedText;
  email_signature: string | null;
  hosted_page_enabled: boolean;
  chat_webhook: ChatWebhookRef | null;
}

/** Settings as checked, before the chat URL is sealed: `chat_webhook_url` in clear. */
export type ParsedSettings = Omit<ContactFormSettings, 'chat_webhook'> & { chat_webhook_url: string | null };

const emailSchema = z.email({ error: 'must be an e-mail address' }).max(254);
const localized = (max: number) => z.union([z.string().max(max), z.record(z.string(), z.string().max(max))]);

const shape = {
  slug: formSetSlugSchema,
  name: z.string().trim().min(1).max(NAME_MAX_LENGTH),
  notification_emails: z.array(emailSchema).max(MAX_NOTIFICATION_EMAILS).default([]),
  reply_to_field: z.string().nullable().default(null),
  honeypot_enabled: z.boolean().default(true),
  honeypot_field: z.string().regex(FIELD_KEY_PATTERN, { error: 'must be a lowercase letter followed by lowercase letters, digits or underscores' }).max(64).default(HONEYPOT_DEFAULT_FIELD),
  fields: z.array(contactFieldSchema).min(1).max(MAX_CONTACT_FIELDS),
  autoreply_enabled: z.boolean().default(false),
  autoreply_to_field: z.string().nullable().default(null),
  autoreply_subject: localized(SUBJECT_MAX_LENGTH).default({}),
  autoreply_body: localized(BODY_MAX_LENGTH).default({}),
  email_signature: z.string().max(SIGNATURE_MAX_LENGTH).nullable().default(null),
  hosted_page_enabled: z.boolean().default(false),
  chat_webhook_url: z.string().max(CHAT_URL_MAX_LENGTH).nullable().default(null),
};

export const contactFormInputSchema = z.strictObject(shape);
export type ContactFormInput = z.input<typeof contactFormInputSchema>;
export const SETTING_NAMES = Object.keys(shape) as Array<keyof typeof shape>;

export interface SettingsContext {
  contentLocales: ContentLocales;
}

/**
 * Checks a whole settings object (a create's body, or an update merged over the current settings) and
 * returns it normalised; throws VALIDATION_ERROR naming every problem.
 */
export function parseContactFormSettings(input: unknown, context: SettingsContext): ParsedSettings {
  const result = contactFormInputSchema.safeParse(input);
  if (!result.success) throw problemsError('Invalid contact form', zodProblems(result.error.issues, input, '', nameFieldSegment));
  const raw = result.data;
  const problems: Problem[] = [];
  const { defaultLocale, locales } = context.contentLocales;

  const keys = new Map<string, ContactField>();
  raw.fields.forEach((field, index) => {
    const where = `fields.${field.key}`;
    if (keys.has(field.key)) problems.push(problem(joinPath('fields', index), `key "${field.key}" is used twice`));
    else keys.set(field.key, field);
    for (const p of fieldRuleProblems(field)) problems.push(problem(`${where}.${p.where}`, p.message));
    if (raw.honeypot_enabled && field.key === raw.honeypot_field) problems.push(problem(`${where}.key`, `is the honeypot field name (choose another key or another honeypot_field)`));
  });

  const emailField = (setting: 'reply_to_field' | 'autoreply_to_field', key: string | null) => {
    if (key === null) return;
    const field = keys.get(key);
    if (!field) problems.push(problem(setting, `names no field of this form ("${key}")`));
    else if (field.type !== 'email') problems.push(problem(setting, `must name an email field, but "${key}" is a ${field.type} field`));
  };
  emailField('reply_to_field', raw.reply_to_field);
  emailField('autoreply_to_field', raw.autoreply_to_field);

  const duplicates = raw.notification_emails.filter((e, i) => raw.notification_emails.findIndex((x) => x.toLowerCase() === e.toLowerCase()) !== i);
  if (duplicates.length) problems.push(problem('notification_emails', `lists ${duplicates[0]} twice`));

  const subject = normaliseLocalized('autoreply_subject', raw.autoreply_subject, defaultLocale, locales, problems);
  const body = normaliseLocalized('autoreply_body', raw.autoreply_body, defaultLocale, locales, problems);
  for (const [setting, texts] of [['autoreply_subject', subject], ['autoreply_body', body]] as const) {
    for (const [locale, text] of Object.entries(texts)) {
      for (const name of placeholders(text)) {
        if (!keys.has(name)) problems.push(problem(`${setting}.${locale}`, `uses {{${name}}}, which names no field of this form`));
      }
    }
  }
  if (raw.autoreply_enabled) {
    if (raw.autoreply_to_field === null) problems.push(problem('autoreply_to_field', 'is required when autoreply_enabled is true (the email field holding the submitter\'s address)'));
    if (!nonBlank(subject[defaultLocale])) problems.push(problem('autoreply_subject', `needs a text for the project's default locale ${defaultLocale} when autoreply_enabled is true`));
    if (!nonBlank(body[defaultLocale])) problems.push(problem('autoreply_body', `needs a text for the project's default locale ${defaultLocale} when autoreply_enabled is true`));
  }

  let chatUrl: string | null = null;
  if (raw.chat_webhook_url !== null && raw.chat_webhook_url.trim() !== '') {
    const reason = chatUrlProblem(raw.chat_webhook_url.trim());
    if (reason) problems.push(problem('chat_webhook_url', reason));
    else chatUrl = raw.chat_webhook_url.trim();
  }

  if (problems.length) throw problemsError('Invalid contact form', problems);
  const { chat_webhook_url: _ignored, ...rest } = raw;
  return {
    ...rest,
    notification_emails: raw.notification_emails,
    email_signature: raw.email_signature === null || raw.email_signature.trim() === '' ? null : raw.email_signature,
    autoreply_subject: subject,
    autoreply_body: body,
    chat_webhook_url: chatUrl,
  };
}

/** Why a chat webhook URL is refused, or null: https only, with a host, no credentials in it. */
export function chatUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol !== 'https:') return 'must be an https URL (chat notifications are sent over HTTPS only)';
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not carry a user name or password';
  return null;
}

/** `https://host/…`: what lists show of a chat webhook URL (its path is the credential). */
export function displayChatUrl(value: string): string {
  const url = new URL(value);
  return `${url.protocol}//${url.host}/…`;
}

/** The `{{key}}` placeholders a text uses. */
export function placeholders(text: string): string[] {
  return [...text.matchAll(/\{\{\s*([a-z][a-z0-9_]*)\s*\}\}/g)].map((m) => m[1]!);
}

function normaliseLocalized(setting: string, value: string | Record<string, string>, defaultLocale: string, locales: readonly string[], problems: Problem[]): LocalizedText {
  if (typeof value === 'string') return value.trim() === '' ? {} : { [defaultLocale]: value };
  const out: LocalizedText = {};
  for (const [locale, text] of Object.entries(value)) {
    if (!isLocaleCode(locale)) problems.push(problem(`${setting}.${locale}`, 'is not a locale code such as en, ja or pt-BR'));
    else if (!locales.includes(locale)) problems.push(problem(`${setting}.${locale}`, `is not a content locale of the project (${locales.join(', ')})`));
    else if (text.trim() !== '') out[locale] = text;
  }
  return out;
}

function nonBlank(text: string | undefined): boolean {
  return text !== undefined && text.trim() !== '';
}

/** Fields are named by key in problem paths: `fields.email.options`, not `fields[2].options`. */
function nameFieldSegment(containerPath: ReadonlyArray<PropertyKey>, segment: PropertyKey, input: unknown): string | number | null {
  if (containerPath.length === 1 && containerPath[0] === 'fields' && typeof segment === 'number') {
    const fields = (input as { fields?: unknown } | null)?.fields;
    const key = Array.isArray(fields) ? (fields[segment] as { key?: unknown } | undefined)?.key : undefined;
    return typeof key === 'string' && FIELD_KEY_PATTERN.test(key) ? key : segment;
  }
  return null;
}

/** The settings an update leads to: the current ones with the named settings replaced (chat URL handled by the caller). */
export function mergeSettings(current: ContactFormSettings, patch: Record<string, unknown>): Record<string, unknown> {
  const { chat_webhook: _sealed, ...rest } = current;
  return { ...rest, chat_webhook_url: null, ...patch };
}
