import type { ContactFormSettings, LocalizedText } from '../domain/contact-form/contact-form-settings.ts';
import type { NoticeKind } from '../domain/contact-form/contact-form-events.ts';
import { displayValue, type SubmittedValues } from '../domain/contact-form/submission-values.ts';
import type { MailMessage } from '../mail/mail-transport.ts';
import { escapeHtml } from '../html-escape.ts';

/**
 * The messages a submission's notices consist of. Pure: everything comes in the arguments.
 *
 * - notification: to every configured recipient at once, every submitted value with its label, the time,
 *   the submission id and a console link; Reply-To is the value of the reply-to field. Text and HTML.
 * - autoreply: to the address in the autoreply field; subject and body in the submission's locale (else
 *   the project's default locale, else any there is), `{{field_key}}` placeholders replaced, the signature
 *   appended. HTML (with a text part); every user value is HTML-escaped.
 * - chat: a short text without submitted values (chat channels are read more widely than a mailbox): the
 *   form, the time and the console link.
 * The Message-ID is fixed per submission and notice kind, so a notice sent again after a crash is
 * recognisably the same message.
 */
export interface NoticeContext {
  formId: string;
  submissionId: string;
  receivedAt: string;
  /** The submission's locale. */
  locale: string;
  /** The project's default locale, for the autoreply fallback. */
  defaultLocale: string;
  mailFrom: string;
  /** The link to the submission in the console: {console base}/p/{projectId}/contact-forms/{formId}/submissions/{submissionId}. */
  consoleLink: string;
}

export function messageIdFor(submissionId: string, kind: NoticeKind, mailFrom: string): string {
  return `<${submissionId}.${kind}@${mailDomain(mailFrom)}>`;
}

/** The console page of a submission, which opens it after sign-in (console/src/app.tsx routes it). */
export function consoleLinkFor(consoleBase: string, projectId: string, formId: string, submissionId: string): string {
  return `${consoleBase.replace(/\/+$/, '')}/p/${projectId}/contact-forms/${formId}/submissions/${submissionId}`;
}

export function composeNotification(form: ContactFormSettings, values: SubmittedValues, context: NoticeContext): MailMessage {
  const rows = form.fields.filter((f) => values[f.key] !== undefined).map((f) => ({ label: f.label, key: f.key, multiline: f.type === 'textarea', value: displayValue(f, values[f.key]!) }));
  const replyTo = form.reply_to_field ? plainAddress(values[form.reply_to_field]) : undefined;
  const text = [
    `New submission to the contact form "${form.name}" (${form.slug}).`,
    '',
    `Received: ${context.receivedAt}`,
    `Submission: ${context.submissionId}`,
    '',
    ...rows.flatMap((r) => (r.multiline ? [`${r.label}:`, ...r.value.split(/\r?\n/).map((line) => `  ${line}`)] : [`${r.label}: ${r.value}`])),
    ...(rows.length === 0 ? ['(no values)'] : []),
    '',
    `Open it in the console: ${context.consoleLink}`,
    '',
  ].join('\n');
  const html = page(context.locale, `New submission: ${form.name}`, [
    `<p>New submission to the contact form <strong>${escapeHtml(form.name)}</strong> (${escapeHtml(form.slug)}).</p>`,
    `<p>Received: <time datetime="${escapeHtml(context.receivedAt)}">${escapeHtml(context.receivedAt)}</time><br>Submission: ${escapeHtml(context.submissionId)}</p>`,
    '<table cellpadding="6" style="border-collapse:collapse">',
    ...rows.map((r) => `<tr><th align="left" valign="top">${escapeHtml(r.label)}</th><td>${multiline(r.value)}</td></tr>`),
    '</table>',
    `<p><a href="${escapeHtml(context.consoleLink)}">Open it in the console</a></p>`,
  ]);
  return {
    messageId: messageIdFor(context.submissionId, 'notification', context.mailFrom),
    from: context.mailFrom,
    to: [...form.notification_emails],
    ...(replyTo === undefined ? {} : { replyTo }),
    subject: singleLine(`New submission: ${form.name}`),
    text,
    html,
    date: new Date(context.receivedAt),
    headers: { 'X-Contact-Form': form.slug, 'X-Contact-Submission': context.submissionId },
  };
}

/** The autoreply, or null when the submission holds no address in the autoreply field. */
export function composeAutoreply(form: ContactFormSettings, values: SubmittedValues, context: NoticeContext): MailMessage | null {
  const to = form.autoreply_to_field ? plainAddress(values[form.autoreply_to_field]) : undefined;
  if (to === undefined) return null;
  const locale = pickLocale(form.autoreply_body, context.locale, context.defaultLocale);
  const subjectTemplate = pick(form.autoreply_subject, locale, context.defaultLocale);
  const bodyTemplate = pick(form.autoreply_body, locale, context.defaultLocale);
  const byKey = new Map(form.fields.map((f) => [f.key, f]));
  const plain = (key: string) => (values[key] === undefined ? '' : displayValue(byKey.get(key), values[key]!));
  const subject = singleLine(fill(subjectTemplate, plain));
  const bodyText = fill(bodyTemplate, plain);
  const paragraphs = bodyTemplate.split(/\r?\n\s*\r?\n/).map((p) => `<p>${fill(p.trim(), (key) => escapeHtml(plain(key)), (literal) => escapeHtml(literal)).replace(/\r?\n/g, '<br>')}</p>`);
  const signature = form.email_signature;
  const html = page(locale, subject, [...paragraphs, ...(signature ? [`<p class="signature">${multiline(signature)}</p>`] : [])]);
  const text = `${bodyText.trim()}\n${signature ? `\n-- \n${signature}\n` : ''}`;
  return {
    messageId: messageIdFor(context.submissionId, 'autoreply', context.mailFrom),
    from: context.mailFrom,
    to: [to],
    subject,
    text,
    html,
    date: new Date(context.receivedAt),
    headers: { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' },
  };
}

export function composeChatText(form: ContactFormSettings, context: NoticeContext): string {
  return `New submission to the contact form "${form.name}" at ${context.receivedAt}: ${context.consoleLink}`;
}

/** The locale whose text is used: the submission's, else the project's default, else the first there is. */
export function pickLocale(texts: LocalizedText, locale: string, defaultLocale: string): string {
  if (texts[locale]?.trim()) return locale;
  if (texts[defaultLocale]?.trim()) return defaultLocale;
  return Object.keys(texts).find((l) => texts[l]!.trim()) ?? defaultLocale;
}

function pick(texts: LocalizedText, locale: string, defaultLocale: string): string {
  return texts[pickLocale(texts, locale, defaultLocale)] ?? '';
}

/** Replaces `{{key}}` with `value(key)`; the text around placeholders goes through `literal`. */
function fill(template: string, value: (key: string) => string, literal: (text: string) => string = (t) => t): string {
  let out = '';
  let last = 0;
  for (const match of template.matchAll(/\{\{\s*([a-z][a-z0-9_]*)\s*\}\}/g)) {
    out += literal(template.slice(last, match.index)) + value(match[1]!);
    last = match.index! + match[0].length;
  }
  return out + literal(template.slice(last));
}

/**
 * A submitted value used as an address (Reply-To, the autoreply's recipient) when it is one plain address
 * (local@domain, nothing a mail library could read as a display name, a group, a second address or a header
 * line); undefined otherwise. Submissions are checked as e-mail addresses when they arrive, but the log may
 * hold values written before a check existed, or imported: an address header is no place to find out.
 */
export function plainAddress(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 254) return undefined;
  return /^[^\s@"(),:;<>[\\\]\u0000-\u001f\u007f]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/u.test(value) ? value : undefined;
}

function multiline(text: string): string {
  return escapeHtml(text).replace(/\r?\n/g, '<br>');
}

function singleLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').trim().slice(0, 300);
}

function page(locale: string, title: string, body: string[]): string {
  return `<!doctype html>\n<html lang="${escapeHtml(locale)}">\n<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>\n<body>\n${body.join('\n')}\n</body>\n</html>\n`;
}

/** The domain of the sender's address (`Shop <shop@example.com>` → example.com). */
export function mailDomain(mailFrom: string): string {
  const address = /<([^>]+)>/.exec(mailFrom)?.[1] ?? mailFrom;
  const domain = address.split('@').pop()!.trim().toLowerCase();
  return /^[a-z0-9.-]+$/.test(domain) && domain !== '' ? domain : 'localhost';
}
