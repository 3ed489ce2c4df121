import { z } from 'zod';
import { CONTACT_FIELD_TYPES } from '../../domain/contact-form/contact-form-fields.ts';
import { defineTool, idempotencyKey, READ_ONLY, uuid, WRITES, type ToolDefinition } from '../tool-kit.ts';
import { contactFormSchema } from '../../http/admin/contact-form-routes.ts';

const localized = z.union([z.string(), z.record(z.string(), z.string())]);
const option = z.union([z.string(), z.object({ value: z.string(), label: z.string().optional() })]);
const field = z.object({
  key: z.string().describe('The name of the value in the submitted JSON: a lowercase letter, then lowercase letters, digits or underscores.'),
  type: z.enum(CONTACT_FIELD_TYPES).describe(`One of ${CONTACT_FIELD_TYPES.join(', ')}.`),
  label: z.string().describe('The label shown to the submitter.'),
  required: z.boolean().optional().describe('Default false; a required checkbox must be ticked (consent).'),
  options: z.array(option).optional().describe('select, radio, multiselect: the choices, as strings or {value, label}.'),
  limits: z
    .object({ minLength: z.number().optional(), maxLength: z.number().optional(), min: z.number().optional(), max: z.number().optional(), integer: z.boolean().optional(), minItems: z.number().optional(), maxItems: z.number().optional() })
    .optional()
    .describe('By type: strings take minLength/maxLength, number takes min/max/integer, multiselect takes minItems/maxItems.'),
  placeholder: z.string().optional().describe('Placeholder text on the hosted page.'),
  help: z.string().optional().describe('A hint under the input on the hosted page.'),
});

const settings = {
  name: z.string().describe('Display name, e.g. "Contact us".'),
  slug: z.string().describe('URL-safe identifier, unique in the project: submissions go to POST {publicBase}/contact-forms/{slug}/submit.'),
  fields: z.array(field).min(1).describe('The fields a submitter fills in.'),
  notification_emails: z.array(z.string()).optional().describe('Recipients of the notice sent for each submission (at most 20).'),
  reply_to_field: z.string().nullable().optional().describe('An email field whose value becomes the notice\'s Reply-To.'),
  honeypot_enabled: z.boolean().optional().describe('Spam protection: a hidden field bots fill in; such submissions answer ok and are dropped. Default true.'),
  honeypot_field: z.string().optional().describe('The honeypot field\'s name, default "website".'),
  autoreply_enabled: z.boolean().optional().describe('Send the submitter a thank-you e-mail. Default false.'),
  autoreply_to_field: z.string().nullable().optional().describe('The email field holding the submitter\'s address (required with autoreply_enabled).'),
  autoreply_subject: localized.optional().describe('Subject of the autoreply: a string, or {locale: text}; may use {{field_key}}.'),
  autoreply_body: localized.optional().describe('Body of the autoreply (plain text): a string, or {locale: text}; may use {{field_key}}.'),
  email_signature: z.string().nullable().optional().describe('Appended to the autoreply.'),
  hosted_page_enabled: z.boolean().optional().describe('Serve the hosted contact page and iframe embed. Default false.'),
  chat_webhook_url: z.string().nullable().optional().describe('An https Slack-compatible incoming-webhook URL notified of each submission (Standard plan and above).'),
};

const optional = Object.fromEntries(Object.entries(settings).map(([k, s]) => [k, s.optional()])) as { [K in keyof typeof settings]: z.ZodOptional<(typeof settings)[K]> };

/** Contact forms (submissions hold personal data and stay with console sessions). */
export const contactFormTools: ToolDefinition[] = [
  defineTool({
    name: 'list_contact_forms',
    title: 'List contact forms',
    description: 'Lists the project\'s contact forms with their settings: {items: [{id, name, slug, fields, ...}]}. Needs an agent key of scope full or schema.',
    input: {},
    output: z.object({ items: z.array(contactFormSchema) }),
    annotations: READ_ONLY,
    run: async (_args, { api }) => api.get('/contact-forms'),
  }),

  defineTool({
    name: 'get_contact_form',
    title: 'Read a contact form',
    description: 'Reads one contact form with every setting (id, name, slug, fields, notification e-mails, autoreply, honeypot, hosted page, version). Needs an agent key of scope full or schema.',
    input: { formId: uuid('a contact form id').describe('The contact form\'s id (from list_contact_forms or create_contact_form).') },
    output: contactFormSchema,
    annotations: READ_ONLY,
    run: async (args, { api }) => api.get(`/contact-forms/${args.formId}`),
  }),

  defineTool({
    name: 'create_contact_form',
    title: 'Create a contact form',
    description:
      'Creates a contact form: the public API then accepts submissions at POST {publicBase}/contact-forms/{slug}/submit with a JSON object keyed by the field keys, stores them, e-mails notification_emails, and (autoreply_enabled) thanks the submitter. Returns the form with its id. A slug already used is a 409 CONFLICT; every invalid setting is named in one 400. Example fields: [{"key": "name", "type": "text", "label": "Name", "required": true}, {"key": "email", "type": "email", "label": "E-mail", "required": true}, {"key": "message", "type": "textarea", "label": "Message", "required": true}]. Needs an agent key of scope full or schema. Submissions themselves are for console sessions only (personal data).',
    input: { ...settings, idempotencyKey },
    output: contactFormSchema,
    annotations: WRITES,
    run: async (args, { api }) => api.request('POST', '/contact-forms', { body: args }),
  }),

  defineTool({
    name: 'update_contact_form',
    title: 'Change a contact form',
    description:
      'Changes settings of a contact form, autoreply_* included; settings left out keep their values (fields, when given, replace the whole list). Returns the form. expectedVersion refuses the change when someone else changed the form meanwhile. Deleting a contact form is never possible with an agent key. Needs an agent key of scope full or schema.',
    input: {
      formId: uuid('a contact form id').describe('The contact form\'s id.'),
      ...optional,
      expectedVersion: z.number().int().positive().optional().describe('The version your change is based on (from get_contact_form).'),
    },
    output: contactFormSchema,
    annotations: WRITES,
    run: async (args, { api }) => {
      const { formId, ...body } = args;
      return api.request('PATCH', `/contact-forms/${formId}`, { body });
    },
  }),
];
