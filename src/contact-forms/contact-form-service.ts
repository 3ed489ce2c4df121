import { requirePersonFor } from '../domain/approval-policy.ts';
import type { Principal } from '../domain/principal.ts';
import type { ProjectView } from '../application/content-service.ts';
import { handleCommand } from '../application/command-handler.ts';
import type { IdempotentResult } from '../application/idempotency.ts';
import { ProjectWrites, type ProjectServiceDeps } from '../application/project-writes.ts';
import { actorOf } from '../domain/access/caller.ts';
import { notFound } from '../domain/domain-error.ts';
import type { OutboundPolicy, Resolver } from '../security/ssrf-guard.ts';
import { assertCallableUrl } from '../application/callable-url.ts';
import { requirePlan } from '../domain/plans.ts';
import { contactFormDecider } from '../domain/contact-form/contact-form-decider.ts';
import { contactFormStream } from '../domain/contact-form/contact-form-events.ts';
import {
  displayChatUrl,
  mergeSettings,
  parseContactFormSettings,
  type ChatWebhookRef,
  type ContactFormSettings,
  type ParsedSettings,
} from '../domain/contact-form/contact-form-settings.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { contactFormQueries, type ContactFormQueries } from '../../projections/contact-forms-queries.ts';
import type { ContactFormDoc } from '../../projections/contact-forms.ts';

/** The project a contact-form request acts in (the admin's project document). */
export type ContactProject = ProjectView & { slug?: string };

/** A contact form as the admin API shows it: every setting, the chat URL by scheme and host only. */
export interface ContactFormView {
  id: string;
  slug: string;
  name: string;
  notification_emails: string[];
  reply_to_field: string | null;
  honeypot_enabled: boolean;
  honeypot_field: string;
  fields: ContactFormSettings['fields'];
  autoreply_enabled: boolean;
  autoreply_to_field: string | null;
  autoreply_subject: Record<string, string>;
  autoreply_body: Record<string, string>;
  email_signature: string | null;
  hosted_page_enabled: boolean;
  /** `https://hooks.slack.com/…`: the URL's path is a credential and is never shown again. */
  chat_webhook_url: string | null;
  version: number;
  createdAt: string;
  updatedAt: string;
  /** Where submissions go, relative to either public base. */
  submitPath: string;
  /** The hosted page on the service's own host, when hosted publishing is on. */
  hostedPagePath: string | null;
}

const SLUG_SCOPE = (projectId: string) => `contact-form-slug:${projectId}`;
const chatContext = (formId: string) => `contact-form:${formId}:chat-webhook`;

/**
 * Admin use cases on contact forms (create_contact_form, update_contact_form of spec 4.4). Everything is
 * checked before the first append (permission, every setting, plan), so bad input writes nothing; a write
 * returns once the read model shows it. Creates are idempotent by key (spec 4.3: same key, same id) and
 * slugs are unique per project (409 CONFLICT): reserved in their own stream, released on deletion.
 */
export class ContactFormService {
  readonly #writes: ProjectWrites;
  readonly #contactForms: ContactFormQueries;

  constructor(
    private readonly deps: ProjectServiceDeps & {
      /** Seals chat webhook URLs (SECRETS_KEY). */
      secrets: SecretBox;
      /** OUTBOUND_ALLOWLIST: chat webhook URLs are checked against it when set, as webhooks are. */
      outbound: OutboundPolicy;
      /** Resolves host names for that check (default the system resolver). */
      resolve?: Resolver;
    },
  ) {
    this.#writes = new ProjectWrites(deps);
    this.#contactForms = contactFormQueries(deps.reader);
  }

  async create(principal: Principal, project: ContactProject, input: Record<string, unknown>, idempotencyKey?: string): Promise<IdempotentResult> {
    // humanApproval: a new contact form is live at once (it takes submissions and sends its autoreply to the public).
    requirePersonFor(principal, project.approvalPolicy, 'create_contact_form', {}, 'create a contact form (it takes submissions and sends its autoreply to the public at once)');
    const parsed = parseContactFormSettings(input, { contentLocales: project.contentLocales });
    if (parsed.chat_webhook_url !== null) {
      requirePlan(project.plan, 'standard', 'Chat notifications');
      await this.#assertReachable(parsed.chat_webhook_url);
    }
    const run = async (ids: Record<string, string>): Promise<IdempotentResult> => {
      const formId = ids['formId']!;
      // A retried idempotent request whose first run got this far answers with what it made.
      const existing = await this.#contactForms.form(formId);
      if (existing) return { status: 201, body: viewOf(existing, project) };
      const settings = this.#seal(formId, parsed, null);
      const command = { type: 'create_contact_form' as const, projectId: project.projectId, formId, settings };
      // Decide first: a refused command reserves nothing.
      contactFormDecider.decide(command, contactFormDecider.initialState(), { principal });
      await this.deps.reservations.claim(SLUG_SCOPE(project.projectId), settings.slug, formId, actorOf(principal), 'contact form slug');
      try {
        const result = await handleCommand(this.deps.log, contactFormStream(formId), contactFormDecider, command, { principal }, { actor: actorOf(principal), ...(idempotencyKey ? { idempotencyKey } : {}) });
        await this.#writes.settle(result.position);
      } catch (error) {
        await this.deps.reservations.release(SLUG_SCOPE(project.projectId), settings.slug, formId, actorOf(principal));
        throw error;
      }
      return { status: 201, body: await this.get(project, formId) };
    };
    return this.#writes.idempotent(principal, project.projectId, 'create_contact_form', idempotencyKey, input, ['formId'], run);
  }

  async list(project: ContactProject): Promise<ContactFormView[]> {
    const docs = await this.#contactForms.formsOfProject(project.projectId);
    return docs.map((d) => viewOf(d, project));
  }

  async get(project: ContactProject, formId: string): Promise<ContactFormView> {
    return viewOf(await this.docOrFail(project, formId), project);
  }

  /**
   * Changes the named settings (update_contact_form: autoreply_* and every other setting); settings left
   * out keep their values, `chat_webhook_url: null` removes the chat notification. The result is checked as
   * a whole. With `expectedVersion`, a form changed meanwhile is a CONFLICT.
   */
  async update(principal: Principal, project: ContactProject, formId: string, patch: Record<string, unknown>, expectedVersion?: number): Promise<ContactFormView> {
    const current = await this.docOrFail(project, formId);
    // humanApproval: a contact form answers the public at once (its submit endpoint, hosted page and autoreply).
    requirePersonFor(principal, project.approvalPolicy, 'update_contact_form', { contactFormId: formId }, 'change a contact form (its fields, hosted page and autoreply are public)');
    const parsed = parseContactFormSettings(mergeSettings(current.settings, patch), { contentLocales: project.contentLocales });
    let settings: ContactFormSettings;
    if (!('chat_webhook_url' in patch)) {
      settings = { ...this.#seal(formId, { ...parsed, chat_webhook_url: null }, null), chat_webhook: current.settings.chat_webhook };
    } else {
      const existing = current.settings.chat_webhook;
      const unchanged = existing !== null && parsed.chat_webhook_url !== null && this.#openChat(formId, existing) === parsed.chat_webhook_url;
      if (parsed.chat_webhook_url !== null && !unchanged) {
        requirePlan(project.plan, 'standard', 'Chat notifications');
        await this.#assertReachable(parsed.chat_webhook_url);
      }
      settings = this.#seal(formId, parsed, unchanged ? existing : null);
    }
    const command = { type: 'update_contact_form' as const, settings, ...(expectedVersion === undefined ? {} : { expectedVersion }) };
    const state = { status: 'active' as const, projectId: project.projectId, formId, settings: current.settings, version: current.version };
    const events = contactFormDecider.decide(command, state, { principal });
    if (events.length === 0) return viewOf(current, project);
    const scope = SLUG_SCOPE(project.projectId);
    const renamed = settings.slug !== current.slug;
    if (renamed) await this.deps.reservations.claim(scope, settings.slug, formId, actorOf(principal), 'contact form slug');
    try {
      const result = await handleCommand(this.deps.log, contactFormStream(formId), contactFormDecider, command, { principal }, { actor: actorOf(principal) });
      await this.#writes.settle(result.position);
    } catch (error) {
      if (renamed) await this.deps.reservations.release(scope, settings.slug, formId, actorOf(principal));
      throw error;
    }
    if (renamed) await this.deps.reservations.release(scope, current.slug, formId, actorOf(principal));
    return this.get(project, formId);
  }

  /** Deletes a contact form (console tenant_admin only): its slug is free again; its submissions stay filed. */
  async delete(principal: Principal, project: ContactProject, formId: string): Promise<void> {
    const current = await this.docOrFail(project, formId);
    const result = await handleCommand(this.deps.log, contactFormStream(formId), contactFormDecider, { type: 'delete_contact_form' }, { principal }, { actor: actorOf(principal) });
    await this.deps.reservations.release(SLUG_SCOPE(project.projectId), current.slug, formId, actorOf(principal));
    await this.#writes.settle(result.position);
  }

  /** The form's document, or NOT_FOUND for an unknown, deleted or other project's form. */
  async docOrFail(project: { projectId: string }, formId: string, options: { includeDeleted?: boolean } = {}): Promise<ContactFormDoc> {
    const doc = await this.#contactForms.form(formId);
    if (!doc || doc.projectId !== project.projectId || (doc.deleted && !options.includeDeleted)) throw notFound(`No contact form ${formId} in this project.`);
    return doc;
  }

  /** The live form of a project by slug, or null. */
  bySlug(projectId: string, slug: string): Promise<ContactFormDoc | null> {
    return this.#contactForms.formBySlug(projectId, slug);
  }

  /** A chat webhook URL is checked when it is set, as webhook URLs are (and again at every delivery). */
  #assertReachable(url: string): Promise<void> {
    return assertCallableUrl('chat_webhook_url', url, { policy: this.deps.outbound, resolve: this.deps.resolve }, 'Chat notifications');
  }

  #seal(formId: string, parsed: ParsedSettings, keep: ChatWebhookRef | null): ContactFormSettings {
    const { chat_webhook_url: url, ...rest } = parsed;
    const chat = url === null ? null : keep ?? { sealedUrl: this.deps.secrets.seal(url, chatContext(formId)), display: displayChatUrl(url) };
    return { ...rest, chat_webhook: chat };
  }

  #openChat(formId: string, ref: ChatWebhookRef): string | null {
    try {
      return this.deps.secrets.open(ref.sealedUrl, chatContext(formId));
    } catch {
      return null;
    }
  }
}

/** Opens a form's sealed chat webhook URL (for the notice sender). */
export function openChatUrl(secrets: SecretBox, formId: string, ref: ChatWebhookRef): string {
  return secrets.open(ref.sealedUrl, chatContext(formId));
}

export function viewOf(doc: ContactFormDoc, project: { slug?: string }): ContactFormView {
  const s = doc.settings;
  return {
    id: doc.formId,
    slug: s.slug,
    name: s.name,
    notification_emails: s.notification_emails,
    reply_to_field: s.reply_to_field,
    honeypot_enabled: s.honeypot_enabled,
    honeypot_field: s.honeypot_field,
    fields: s.fields,
    autoreply_enabled: s.autoreply_enabled,
    autoreply_to_field: s.autoreply_to_field,
    autoreply_subject: s.autoreply_subject,
    autoreply_body: s.autoreply_body,
    email_signature: s.email_signature,
    hosted_page_enabled: s.hosted_page_enabled,
    chat_webhook_url: s.chat_webhook?.display ?? null,
    version: doc.version,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    submitPath: `/contact-forms/${s.slug}/submit`,
    hostedPagePath: s.hosted_page_enabled && project.slug ? `/contact/${project.slug}/${s.slug}` : null,
  };
}
