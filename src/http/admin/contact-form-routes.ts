import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ContactForms } from '../../contact-forms/contact-forms.ts';
import { CONTACT_FIELD_TYPES, contactFieldSchema } from '../../domain/contact-form/contact-form-fields.ts';
import { contactFormSettingsSchema } from '../../domain/contact-form/contact-form-events.ts';
import { NOTE_MAX_LENGTH } from '../../contact-forms/submission-service.ts';
import { notFound } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { actorSchema } from './content-views.ts';
import { listQuery, pageSchema } from './list-query.ts';
import { type AdminDeps, idempotencyKeyOf, principalOf, projectOf } from './admin-context.ts';
import { idempotentCreate } from './idempotent-create.ts';
import { isUuid } from './request-body.ts';

const localized = z.union([z.string(), z.record(z.string(), z.string())]);
const field = z.looseObject({
  key: z.string(),
  type: z.enum(CONTACT_FIELD_TYPES),
  label: z.string(),
  required: z.boolean().optional(),
  options: z.array(z.union([z.string(), z.object({ value: z.string(), label: z.string().optional() })])).optional(),
  limits: z.object({ minLength: z.number().optional(), maxLength: z.number().optional(), min: z.number().optional(), max: z.number().optional(), integer: z.boolean().optional(), minItems: z.number().optional(), maxItems: z.number().optional() }).optional(),
  placeholder: z.string().optional(),
  help: z.string().optional(),
});
/** Every setting of the spec's contact form table; the service checks them all together and names each problem. */
const settings = {
  name: z.string(),
  slug: z.string(),
  notification_emails: z.array(z.string()).optional(),
  reply_to_field: z.string().nullable().optional(),
  honeypot_enabled: z.boolean().optional(),
  honeypot_field: z.string().optional(),
  fields: z.array(field),
  autoreply_enabled: z.boolean().optional(),
  autoreply_to_field: z.string().nullable().optional(),
  autoreply_subject: localized.optional(),
  autoreply_body: localized.optional(),
  email_signature: z.string().nullable().optional(),
  hosted_page_enabled: z.boolean().optional(),
  chat_webhook_url: z.string().nullable().optional(),
};
const createBody = z.looseObject({ ...settings, idempotencyKey: z.string().optional() });
const updateBody = z.looseObject({
  ...Object.fromEntries(Object.entries(settings).map(([k, s]) => [k, s.optional()])),
  expectedVersion: z.number().int().positive().optional(),
});
const submissionsQuery = listQuery({
  read: z.enum(['true', 'false']).optional().describe('true: only read submissions; false: only unread ones.'),
});
/** A submission as the admin API answers it (SubmissionView). */
const submissionSchema = z.object({
  id: z.uuid(),
  formId: z.uuid(),
  receivedAt: z.string(),
  locale: z.string(),
  read: z.boolean(),
  erased: z.boolean(),
  erasedAt: z.string().nullable(),
  values: z.record(z.string(), z.unknown()).nullable().describe('The submitted values, by field key; null once erased.'),
  notes: z.array(z.object({ id: z.uuid(), text: z.string().nullable(), addedAt: z.string(), author: actorSchema })),
  deliveries: z
    .record(z.string(), z.object({ status: z.enum(['pending', 'sent', 'failed', 'skipped']), attempts: z.number().int(), messageId: z.string().nullable(), detail: z.string().nullable(), completedAt: z.string().nullable() }))
    .describe('The delivery status of each notice the submission asked for, by kind.'),
}).meta({ id: 'ContactSubmission' });

/**
 * A contact form with every setting, as the admin API answers it (ContactFormView): the settings its
 * events carry, the chat webhook shown masked instead of sealed, and where submissions go.
 */
export const contactFormSchema = contactFormSettingsSchema
  .omit({ chat_webhook: true })
  .extend({
    id: z.uuid(),
    fields: z.array(contactFieldSchema.extend({ options: z.array(z.object({ value: z.string(), label: z.string() })).optional().describe('select, radio, multiselect: the choices.') })),
    autoreply_subject: contactFormSettingsSchema.shape.autoreply_subject.describe('By locale.'),
    autoreply_body: contactFormSettingsSchema.shape.autoreply_body.describe('By locale.'),
    chat_webhook_url: z.string().nullable().describe('Shown with its path masked: the path is a credential.'),
    version: z.number().int().describe('Send as expectedVersion to update only what you read.'),
    createdAt: z.string(),
    updatedAt: z.string(),
    submitPath: z.string().describe('Where submissions go, relative to either public base.'),
    hostedPagePath: z.string().nullable().describe('The hosted page on the service\'s own host, when hosted publishing is on.'),
  })
  .meta({ id: 'ContactForm' });
const contactFormListSchema = z.object({ items: z.array(contactFormSchema) });
const submissionPageSchema = pageSchema(submissionSchema, { unread: z.number().int().describe('How many of the form\'s submissions are unread.') });

const readBody = z.object({ read: z.boolean() });
const noteBody = z.object({ text: z.string().max(NOTE_MAX_LENGTH, `at most ${NOTE_MAX_LENGTH} characters`), idempotencyKey: z.string().optional() });

/**
 * Contact forms and their submissions (spec sections 2 and 4.4: create_contact_form, update_contact_form).
 * Forms: tenant_admin sessions and full/schema agent keys; deleting is a console-admin action only (agent
 * keys get 403). Submissions hold personal data: console sessions only (any role reads, marks and
 * annotates; tenant_admin erases).
 */
export function contactFormRoutes(deps: AdminDeps, api: ApiRegistry, contact: ContactForms | undefined): Router {
  const router = newRouter();
  if (!contact) return router;
  const { forms, submissions } = contact;
  const id = (ctx: Context, name: string): string => {
    const value = ctx.params[name];
    if (!isUuid(value)) throw notFound(`No ${name === 'formId' ? 'contact form' : 'submission'} ${value}.`);
    return value;
  };
  const tag = 'Contact forms';

  api.add(router, { method: 'get', path: '/contact-forms', operationId: 'listContactForms', permission: 'contact-forms.read', summary: 'List the project\'s contact forms', tag, responses: { 200: { description: 'The contact forms', schema: contactFormListSchema } }, errors: {} }, async (ctx) => {
    ctx.body = { items: await forms.list(projectOf(ctx)) };
  });

  api.add(router, { method: 'post', path: '/contact-forms', operationId: 'createContactForm', permission: 'contact-forms.write', summary: 'Create a contact form (create_contact_form; slug unique per project: 409 on a clash; idempotent by key)', tag, body: createBody, bodyLimitBytes: 256 * 1024, responses: { 201: { description: 'The contact form', schema: contactFormSchema } }, errors: { 403: ['PLAN_REQUIRED', 'HUMAN_APPROVAL_REQUIRED'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const { idempotencyKey: _key, ...input } = body;
    const result = await forms.create(principalOf(ctx), projectOf(ctx), input, idempotencyKeyOf(ctx, body));
    ctx.status = result.status;
    ctx.body = result.body;
  });

  api.add(router, { method: 'get', path: '/contact-forms/:formId', operationId: 'getContactForm', permission: 'contact-forms.read', summary: 'Read a contact form with every setting', tag, responses: { 200: { description: 'The contact form', schema: contactFormSchema } }, errors: {} }, async (ctx) => {
    ctx.body = await forms.get(projectOf(ctx), id(ctx, 'formId'));
  });

  api.add(router, { method: 'patch', path: '/contact-forms/:formId', operationId: 'updateContactForm', permission: 'contact-forms.write', summary: 'Change settings of a contact form (update_contact_form; autoreply_* included); settings left out keep their values', tag, body: updateBody, bodyLimitBytes: 256 * 1024, responses: { 200: { description: 'The contact form', schema: contactFormSchema } }, errors: { 403: ['PLAN_REQUIRED', 'HUMAN_APPROVAL_REQUIRED'], 409: ['CONFLICT', 'REVISION_CONFLICT'] } }, async (ctx, { body }) => {
    const { expectedVersion, ...patch } = body as Record<string, unknown> & { expectedVersion?: number };
    ctx.body = await forms.update(principalOf(ctx), projectOf(ctx), id(ctx, 'formId'), patch, expectedVersion);
  });

  api.add(router, { method: 'delete', path: '/contact-forms/:formId', operationId: 'deleteContactForm', permission: 'contact-forms.delete', summary: 'Delete a contact form (console tenant_admin only; agent keys never). Its submissions stay filed', tag, responses: { 204: { description: 'Deleted', empty: true } }, errors: {} }, async (ctx) => {
    await forms.delete(principalOf(ctx), projectOf(ctx), id(ctx, 'formId'));
    ctx.status = 204;
  });

  api.add(router, { method: 'get', path: '/contact-forms/:formId/submissions', operationId: 'listContactSubmissions', permission: 'submissions.read', summary: 'List a contact form\'s submissions, newest first, with their values and delivery status (console sessions only); read=false lists the unread ones; limit and cursor as every list', tag, query: submissionsQuery, responses: { 200: { description: 'A page of submissions', schema: submissionPageSchema } }, errors: {} }, async (ctx, { query }) => {
    const project = projectOf(ctx);
    const formId = id(ctx, 'formId');
    await forms.docOrFail(project, formId, { includeDeleted: true });
    ctx.body = await submissions.list(project, formId, { read: query.read === undefined ? undefined : query.read === 'true', limit: query.limit, cursor: query.cursor });
  });

  api.add(router, { method: 'get', path: '/contact-forms/:formId/submissions/:submissionId', operationId: 'getContactSubmission', permission: 'submissions.read', summary: 'Read a submission: values (null once erased), notes, read flag and the delivery status of each notice', tag, responses: { 200: { description: 'The submission', schema: submissionSchema } }, errors: {} }, async (ctx) => {
    ctx.body = await submissions.get(projectOf(ctx), id(ctx, 'formId'), id(ctx, 'submissionId'));
  });

  api.add(router, { method: 'patch', path: '/contact-forms/:formId/submissions/:submissionId', operationId: 'markContactSubmission', permission: 'submissions.update', summary: 'Mark a submission read or unread', tag, body: readBody, responses: { 200: { description: 'The submission', schema: submissionSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    ctx.body = await submissions.setRead(principalOf(ctx), projectOf(ctx), id(ctx, 'formId'), id(ctx, 'submissionId'), body.read);
  });

  api.add(router, { method: 'post', path: '/contact-forms/:formId/submissions/:submissionId/notes', operationId: 'addContactSubmissionNote', permission: 'submissions.update', summary: 'Add an internal note to a submission (sealed with the submission\'s key: erasure takes it too)', tag, body: noteBody, responses: { 201: { description: 'The submission with the note', schema: submissionSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    ctx.status = 201;
    const [formId, submissionId, project] = [id(ctx, 'formId'), id(ctx, 'submissionId'), projectOf(ctx)];
    const key = idempotencyKeyOf(ctx, body);
    // The record keeps the note's id; the answer (personal data) is read again, on a replay too.
    const request = { formId, submissionId, text: key === undefined ? null : await submissions.noteFingerprint(submissionId, body.text) };
    await idempotentCreate(deps, ctx, { scope: project.projectId, operation: 'add_submission_note', key, request, ids: ['noteId'] }, async (ids) => {
      await submissions.addNote(principalOf(ctx), project, formId, submissionId, body.text, ids['noteId']);
      return { noteId: ids['noteId']! };
    });
    ctx.body = await submissions.get(project, formId, submissionId);
  });

  api.add(router, { method: 'delete', path: '/contact-forms/:formId/submissions/:submissionId', operationId: 'eraseContactSubmission', permission: 'submissions.erase', summary: 'Erase a submission (tenant_admin): its key is destroyed, so its values and notes can never be read again from the API, the log or a rebuild; the fact that it existed stays in the audit trail', tag, responses: { 204: { description: 'Erased', empty: true } }, errors: {} }, async (ctx) => {
    await submissions.erase(principalOf(ctx), projectOf(ctx), id(ctx, 'formId'), id(ctx, 'submissionId'));
    ctx.status = 204;
  });

  return router;
}
