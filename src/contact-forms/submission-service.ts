import { randomUUID, createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { Principal } from '../domain/principal.ts';
import type { Plan } from '../domain/plans.ts';
import { planAtLeast } from '../domain/plans.ts';
import { actorOf } from '../domain/access/caller.ts';
import { DomainError, invalid, notFound } from '../domain/domain-error.ts';
import { isLocaleCode, type ContentLocales } from '../domain/content/form-set/locale-code.ts';
import { submissionStream, type NoticeKind } from '../domain/contact-form/contact-form-events.ts';
import { submissionDecider } from '../domain/contact-form/submission-decider.ts';
import { submissionProblems, validateSubmission, type SubmissionProblem, type SubmittedValues } from '../domain/contact-form/submission-values.ts';
import { handleCommand } from '../application/command-handler.ts';
import { keysetPage, type Page, type PageRequest } from '../application/keyset-page.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import { READ_YOUR_WRITES_MS } from '../application/project-writes.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import type { MailTransport } from '../mail/mail-transport.ts';
import type { ContactFormDoc, NoticeState, SubmissionDoc } from '../../projections/contact-forms.ts';
import { newSubmissionKey, openNote, openValues, sealNote, sealValues } from './submission-crypto.ts';
import { contactFormQueries, CONTACT_FORM_LISTS, type ContactFormQueries } from '../../projections/contact-forms-queries.ts';
import { messageIdFor } from './notice-messages.ts';

/** The project a submission is for: what the public side resolved. */
export interface SubmittingProject {
  projectId: string;
  plan: Plan;
  contentLocales: ContentLocales;
}

/** Body keys that are never form fields (field keys start with a letter): the language and the hosted page's challenge. */
export const LOCALE_KEY = '_locale';
export const RESERVED_KEYS = new Set([LOCALE_KEY, '_challenge', '_pow']);

export type Acceptance =
  /** The honeypot was filled: answered like a success, with a fresh id; nothing saved or sent. */
  | { kind: 'honeypot'; submissionId: string }
  | { kind: 'invalid'; problems: SubmissionProblem[] }
  | { kind: 'saved'; submissionId: string; position: bigint };

/** A submission as the admin API shows it: values opened with the submission's key, or null once erased. */
export interface SubmissionView {
  id: string;
  formId: string;
  receivedAt: string;
  locale: string;
  read: boolean;
  erased: boolean;
  erasedAt: string | null;
  values: SubmittedValues | null;
  notes: Array<{ id: string; text: string | null; addedAt: string; author: { type: string; id: string } }>;
  /** Delivery status of each notice the submission asked for: pending, sent, failed (with the error) or skipped. */
  deliveries: Partial<Record<NoticeKind, NoticeState>>;
}

export interface SubmissionQuery extends PageRequest {
  read?: boolean | undefined;
}

export const NOTE_MAX_LENGTH = 5000;

/**
 * Contact-form submissions: the public write (spec section 4.2) and the admin side (list, read, mark
 * read/unread, notes, erasure).
 *
 * Receiving: the honeypot is looked at before anything else (a bot gets the same 200 whatever else it
 * sent), then the values are checked against the form; the submission gets a fresh 256-bit key, stored in
 * the key store first, and its values are appended sealed under that key. Which notices it asks for
 * (notification, autoreply, chat) is decided here, from the form and the project's plan at that moment,
 * and recorded in the event; the notice outbox sends them later, never in the request.
 *
 * Erasure destroys the key first, then appends the erased event: once the key is gone no copy of the log,
 * the read model or a rebuild can show the values or the notes again; if the append fails the erasure is
 * retried, and the key is already gone. The .eml copies the embedded mail adapter keeps of the
 * submission's notices are discarded too; mail already delivered by SMTP is beyond reach.
 */
export class SubmissionService {
  constructor(
    private readonly deps: {
      log: EventLog;
      reader: ReadModelReader;
      keyStore: KeyStore;
      watermark: ProjectionWatermark;
      mail: MailTransport;
      mailFrom: string;
      clock: Clock;
      logger: Logger;
    },
  ) {
    this.#contactForms = contactFormQueries(deps.reader);
  }

  readonly #contactForms: ContactFormQueries;

  /** Checks and saves a submission for `form`; `locale` from the query or the body's `_locale`. */
  async accept(project: SubmittingProject, form: ContactFormDoc, body: Record<string, unknown>, requestedLocale?: string): Promise<Acceptance> {
    const settings = form.settings;
    if (settings.honeypot_enabled && filled(body[settings.honeypot_field])) {
      this.deps.logger.info({ projectId: project.projectId, formId: form.formId }, 'contact form: honeypot filled; answered as accepted, nothing saved');
      return { kind: 'honeypot', submissionId: randomUUID() };
    }
    const fromBody = body[LOCALE_KEY];
    if (fromBody !== undefined && typeof fromBody !== 'string') return { kind: 'invalid', problems: [{ field: LOCALE_KEY, message: 'must be a locale code such as en or ja' }] };
    const wanted = requestedLocale ?? fromBody;
    if (wanted !== undefined && wanted !== '' && !isLocaleCode(wanted)) return { kind: 'invalid', problems: [{ field: requestedLocale !== undefined ? 'locale' : LOCALE_KEY, message: 'must be a locale code such as en or ja' }] };
    const ignored = new Set(RESERVED_KEYS);
    if (settings.honeypot_enabled) ignored.add(settings.honeypot_field);
    const problems = submissionProblems(settings.fields, body, ignored);
    if (problems.length) return { kind: 'invalid', problems };
    const values = validateSubmission(settings.fields, body, ignored);
    const locale = resolveLocale(wanted || undefined, project.contentLocales);

    const notices: NoticeKind[] = [];
    if (settings.notification_emails.length > 0) notices.push('notification');
    if (settings.autoreply_enabled && settings.autoreply_to_field && typeof values[settings.autoreply_to_field] === 'string') notices.push('autoreply');
    if (settings.chat_webhook && planAtLeast(project.plan, 'standard')) notices.push('chat');

    const submissionId = randomUUID();
    const key = newSubmissionKey();
    await this.deps.keyStore.put(submissionId, key);
    const command = {
      type: 'receive' as const,
      projectId: project.projectId,
      formId: form.formId,
      submissionId,
      formVersion: form.version,
      locale,
      sealedValues: sealValues(key, submissionId, values),
      notices,
    };
    const result = await handleCommand(this.deps.log, submissionStream(submissionId), submissionDecider, command, { submissionId }, { actor: { type: 'public', id: 'contact-form' } });
    return { kind: 'saved', submissionId, position: result.position! };
  }

  /** As `accept`, for the JSON API: problems become one VALIDATION_ERROR naming each field and problem. */
  async submit(project: SubmittingProject, form: ContactFormDoc, body: unknown, requestedLocale?: string): Promise<{ submissionId: string }> {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('The body must be a JSON object whose keys are the form\'s field keys.');
    const outcome = await this.accept(project, form, body as Record<string, unknown>, requestedLocale);
    if (outcome.kind === 'invalid') {
      throw new DomainError('VALIDATION_ERROR', `Invalid submission: ${outcome.problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, 'Correct the named fields and send the form again.');
    }
    return { submissionId: outcome.submissionId };
  }

  /** A form's submissions, newest first, a page at a time (keyset: see keyset-page.ts), and how many are unread. */
  async list(project: { projectId: string }, formId: string, query: SubmissionQuery): Promise<Page<SubmissionView> & { unread: number }> {
    const filter: Record<string, string | boolean> = { formId, projectId: project.projectId };
    if (query.read !== undefined) filter['read'] = query.read;
    const [page, unread] = await Promise.all([
      keysetPage(this.deps.reader, { ...CONTACT_FORM_LISTS.submissions, filter, sort: [['receivedAt', 'desc']], identity: ['submissions', formId, query.read ?? null], map: (doc) => doc as unknown as SubmissionDoc }, query),
      this.#contactForms.countUnreadSubmissions(project.projectId, formId),
    ]);
    const keys = await this.deps.keyStore.getMany(page.items.filter((d) => !d.erased).map((d) => d.submissionId));
    return { unread, items: page.items.map((d) => this.#view(d, keys.get(d.submissionId) ?? null)), nextCursor: page.nextCursor };
  }

  async get(project: { projectId: string }, formId: string, submissionId: string): Promise<SubmissionView> {
    const doc = await this.#docOrFail(project, formId, submissionId);
    return this.#view(doc, doc.erased ? null : await this.deps.keyStore.get(submissionId));
  }

  async setRead(principal: Principal, project: { projectId: string }, formId: string, submissionId: string, read: boolean): Promise<SubmissionView> {
    await this.#docOrFail(project, formId, submissionId);
    await this.#run(principal, submissionId, { type: 'set_read', read });
    return this.get(project, formId, submissionId);
  }

  /** An internal note, sealed with the submission's key (so erasure takes it too). */
  /**
   * What an idempotency key of a note is checked against: the submission and the text's HMAC under the
   * submission's key, never the text (its hash would outlive an erasure); null once the key is gone.
   */
  async noteFingerprint(submissionId: string, text: string): Promise<string | null> {
    const key = await this.deps.keyStore.get(submissionId);
    return key ? createHmac('sha256', key).update(`note\u0000${text}`).digest('hex') : null;
  }

  async addNote(principal: Principal, project: { projectId: string }, formId: string, submissionId: string, text: string, noteId: string = randomUUID()): Promise<SubmissionView> {
    if (text.trim() === '') throw invalid('text: must not be empty');
    if ([...text].length > NOTE_MAX_LENGTH) throw invalid(`text: must be at most ${NOTE_MAX_LENGTH} characters`);
    const doc = await this.#docOrFail(project, formId, submissionId);
    if (doc.erased) throw new DomainError('CONFLICT', 'The submission was erased: it takes no more notes.');
    const key = await this.deps.keyStore.get(submissionId);
    if (!key) throw new DomainError('CONFLICT', 'The submission\'s key is gone (erased): it takes no more notes.');
    await this.#run(principal, submissionId, { type: 'add_note', noteId, sealedText: sealNote(key, submissionId, noteId, text) });
    return this.get(project, formId, submissionId);
  }

  /**
   * Erases a submission's personal data for good (privacy-law erasure): destroys its key, discards the
   * stored .eml copies of its notices, and appends the erased event (the audit trail keeps that the
   * submission existed and who erased it when). Idempotent.
   */
  async erase(principal: Principal, project: { projectId: string }, formId: string, submissionId: string): Promise<void> {
    await this.#docOrFail(project, formId, submissionId);
    await this.deps.keyStore.destroy(submissionId);
    await this.deps.mail.discard((['notification', 'autoreply'] as const).map((kind) => messageIdFor(submissionId, kind, this.deps.mailFrom)));
    await this.#run(principal, submissionId, { type: 'erase' });
    this.deps.logger.info({ projectId: project.projectId, formId, submissionId, actor: actorOf(principal) }, 'contact form: submission erased (its key destroyed)');
  }

  async #run(principal: Principal, submissionId: string, command: Parameters<typeof submissionDecider.decide>[0]): Promise<void> {
    const result = await handleCommand(this.deps.log, submissionStream(submissionId), submissionDecider, command, { submissionId }, { actor: actorOf(principal) });
    if (result.events.length > 0 && result.position !== null) await this.deps.watermark.waitFor(result.position, READ_YOUR_WRITES_MS);
  }

  async #docOrFail(project: { projectId: string }, formId: string, submissionId: string): Promise<SubmissionDoc> {
    const doc = await this.#contactForms.submission(submissionId);
    if (!doc || doc.projectId !== project.projectId || doc.formId !== formId) throw notFound(`No submission ${submissionId} of contact form ${formId}.`);
    return doc;
  }

  #view(doc: SubmissionDoc, key: Buffer | null): SubmissionView {
    const open = <T>(f: () => T): T | null => {
      if (!key || doc.erased) return null;
      try {
        return f();
      } catch (error) {
        this.deps.logger.error({ err: error, submissionId: doc.submissionId }, 'contact form: a sealed value does not open with the submission\'s key');
        return null;
      }
    };
    return {
      id: doc.submissionId,
      formId: doc.formId,
      receivedAt: doc.receivedAt,
      locale: doc.locale,
      read: doc.read,
      erased: doc.erased || key === null,
      erasedAt: doc.erasedAt,
      values: doc.sealedValues === null ? null : open(() => openValues(key!, doc.submissionId, doc.sealedValues!)),
      notes: doc.notes.map((n) => ({ id: n.noteId, text: n.sealedText === null ? null : open(() => openNote(key!, doc.submissionId, n.noteId, n.sealedText!)), addedAt: n.addedAt, author: n.actor })),
      deliveries: doc.notices,
    };
  }
}

/** The submission's language: the requested locale if the project has it (or its language), else the default. */
export function resolveLocale(requested: string | undefined, locales: ContentLocales): string {
  if (requested) {
    if (locales.locales.includes(requested)) return requested;
    const language = requested.split('-')[0]!;
    if (locales.locales.includes(language)) return language;
  }
  return locales.defaultLocale;
}

function filled(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.length > 0;
  return true;
}
