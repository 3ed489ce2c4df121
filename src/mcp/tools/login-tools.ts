import { z } from 'zod';
import { defineTool, DESTRUCTIVE, projectId, READ_ONLY, uuid, WRITES, type ToolDefinition } from '../tool-kit.ts';
import { loginBrandingSchema } from '../../http/admin/auth-routes.ts';
import { ipAllowlistEntrySchema, ipAllowlistSchema, loginAppearanceSchema } from '../../http/admin/project-routes.ts';

const nullableText = (max: number, what: string) => z.string().max(max).nullable().optional().describe(`${what}; null or "" clears it, left out keeps it.`);

/** The console login page: branding, appearance and the IP allowlist. */
export const loginTools: ToolDefinition[] = [
  defineTool({
    name: 'get_login_branding',
    title: 'Console login branding',
    description:
      'Returns what the console login page of a project shows before anyone signs in (read without credentials): {projectId, projectName, logoUrl, primaryColor, accentColor, message}. Default: this project. Change it with update_login_appearance.',
    input: { projectId: uuid('a project id').optional().describe('Another project\'s id; default this project.') },
    output: loginBrandingSchema,
    annotations: READ_ONLY,
    run: async (args, context) => context.api.get(`/projects/${args.projectId ?? (await projectId(context))}/login-branding`, { as: 'none' }),
  }),

  defineTool({
    name: 'get_login_appearance',
    title: 'Console login appearance',
    description: 'Returns the console login page appearance of this project: {logoUrl, primaryColor, accentColor, message, projectName}. Any agent key scope.',
    input: {},
    output: loginAppearanceSchema,
    annotations: READ_ONLY,
    run: async (_args, { api }) => api.get('/project/login-appearance'),
  }),

  defineTool({
    name: 'update_login_appearance',
    title: 'Change the console login appearance',
    description:
      'Changes the console login page appearance: logoUrl (https image URL), primaryColor and accentColor (hex colours such as #0055ff), message (shown under the form, up to 500 characters). Settings left out are kept; null or "" clears one. Returns the appearance. Needs an agent key of scope full or schema.',
    input: {
      logoUrl: nullableText(2000, 'The logo\'s URL'),
      primaryColor: nullableText(16, 'The primary colour, e.g. "#0055ff"'),
      accentColor: nullableText(16, 'The accent colour, e.g. "#ff8800"'),
      message: nullableText(500, 'A message shown on the login page'),
    },
    output: loginAppearanceSchema,
    annotations: WRITES,
    run: async (args, { api }) => api.request('PUT', '/project/login-appearance', { body: args }),
  }),

  defineTool({
    name: 'list_login_ip_allowlist',
    title: 'List the console login IP allowlist',
    description:
      'Lists the console login IP allowlist: {items: [{id, cidr, label}], enforced}. When the list is not empty and the plan is Business or above, console users may sign in and act only from these addresses (agent keys are not affected). Needs an agent key of scope full or schema.',
    input: {},
    output: ipAllowlistSchema,
    annotations: READ_ONLY,
    run: async (_args, { api }) => api.get('/project/ip-allowlist'),
  }),

  defineTool({
    name: 'add_login_ip_allowlist_entry',
    title: 'Allow an address range for console login',
    description:
      'Adds an IPv4 or IPv6 address or CIDR range (e.g. "203.0.113.0/24") to the console login IP allowlist. Business plan and above (PLAN_REQUIRED names the plan otherwise). Once the list has an entry, console sessions from other addresses are refused, so add the office ranges first. Returns the entry {id, cidr, label}. Needs an agent key of scope full or schema.',
    input: {
      cidr: z.string().min(1).max(100).describe('An address or CIDR range, e.g. "198.51.100.7" or "2001:db8::/32".'),
      label: z.string().max(100).optional().describe('A note, e.g. "Tokyo office".'),
    },
    output: ipAllowlistEntrySchema,
    annotations: WRITES,
    run: async (args, { api }) => api.request('POST', '/project/ip-allowlist', { body: args }),
  }),

  defineTool({
    name: 'delete_login_ip_allowlist_entry',
    title: 'Remove a console login IP allowlist entry',
    description:
      'Removes an entry from the console login IP allowlist by its id (from list_login_ip_allowlist). When the last entry goes, the allowlist no longer restricts sign-in. Allowed on every plan (so a project that left the Business plan can clear its list). Needs an agent key of scope full or schema. Returns {deleted: true, entryId}.',
    input: { entryId: uuid('an allowlist entry id').describe('The entry\'s id.') },
    output: z.object({ deleted: z.literal(true), entryId: z.uuid() }),
    annotations: DESTRUCTIVE,
    run: async (args, { api }) => {
      await api.request('DELETE', `/project/ip-allowlist/${args.entryId}`);
      return { deleted: true, entryId: args.entryId };
    },
  }),
];
