import { z } from 'zod';
import { defineTool, DESTRUCTIVE, READ_ONLY, sessionRequest, type ToolDefinition } from '../tool-kit.ts';
import { approvalPolicySchema, contentLocalesSchema, projectOverviewSchema, publicApiInfoSchema } from '../../http/admin/project-routes.ts';

const localeCode = z.string().regex(/^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/, { error: 'must be a language tag such as en, ja or pt-BR' });

/** The project: overview, public API base, content locales. */
export const projectTools: ToolDefinition[] = [
  defineTool({
    name: 'get_project_overview',
    title: 'Project overview',
    description:
      'Start here. Returns the project this MCP server acts in: id, name, slug, plan (free, solo, standard, business or enterprise: some tools need a plan), content locales and default locale, custom domains, site settings, and the public API base. Then call get_tenant_schema (every form set with its fields) before writing content. Any agent key scope.',
    input: {},
    output: projectOverviewSchema.extend({ publicApi: publicApiInfoSchema.extend({ publicBaseUrl: z.string().describe('The public API base as an absolute URL.') }) }),
    annotations: READ_ONLY,
    run: async (_args, { api, serviceUrl }) => {
      const overview = await api.get<Record<string, unknown> & { publicApi?: { publicBase?: string } }>('/project');
      const base = overview.publicApi?.publicBase;
      return base ? { ...overview, publicApi: { ...overview.publicApi, publicBaseUrl: `${serviceUrl}${base}` } } : overview;
    },
  }),

  defineTool({
    name: 'get_public_api_info',
    title: 'Public API base',
    description:
      'Returns the projectId and the public read API base of the project: publicBase (path, /public/p/{projectId}/v1) and publicBaseUrl (absolute), with example URLs. Websites read published content there without credentials: GET {publicBaseUrl}/form-sets/{formSetSlug}/entries (list), /form-sets/{formSetSlug}/entries/{entrySlug} (one entry), /sitemap.xml, /llms.txt, /media/{assetId}. Only entries with a published revision appear (publish with save_revision → submit_entry_for_review → publish_revision). Any agent key scope.',
    input: {},
    output: publicApiInfoSchema.extend({
      publicBaseUrl: z.string().describe('The public API base as an absolute URL.'),
      examples: z.object({ listEntries: z.string(), entry: z.string(), sitemap: z.string(), llmsTxt: z.string(), media: z.string() }),
      note: z.string(),
    }),
    annotations: READ_ONLY,
    run: async (_args, { api, serviceUrl }) => {
      const info = await api.get<{ projectId: string; publicBase: string; publicKeyHeader?: string }>('/project/public-api-info');
      const publicBaseUrl = `${serviceUrl}${info.publicBase}`;
      return {
        ...info,
        publicBaseUrl,
        examples: {
          listEntries: `${publicBaseUrl}/form-sets/{formSetSlug}/entries?limit=20&locale=en`,
          entry: `${publicBaseUrl}/form-sets/{formSetSlug}/entries/{entrySlug}`,
          sitemap: `${publicBaseUrl}/sitemap.xml`,
          llmsTxt: `${publicBaseUrl}/llms.txt`,
          media: `${publicBaseUrl}/media/{assetId}`,
        },
        note: 'The public API serves published revisions only; it is read-only except contact form submission (POST /contact-forms/{slug}/submit).',
      };
    },
  }),

  defineTool({
    name: 'get_project_content_locales',
    title: 'Content locales',
    description:
      'Returns the project\'s content locales ({locales: ["en", "ja"], defaultLocale: "en"}). With more than one locale, text, textarea and tiptap fields hold one value per locale ({"en": "...", "ja": "..."}) unless the field is locale_shared; a plain value is taken as the default locale\'s. Any agent key scope.',
    input: {},
    output: contentLocalesSchema,
    annotations: READ_ONLY,
    run: async (_args, { api }) => api.get('/project/content-locales'),
  }),

  defineTool({
    name: 'get_approval_policy',
    title: 'Approval policy',
    description:
      'Returns the project\'s approval policy: {humanApproval, fourEyes}. humanApproval on: agent keys may save_revision and submit_entry_for_review, but publish_revision and approving are refused with 403 HUMAN_APPROVAL_REQUIRED (a person approves in the console; the revision waits in the review queue), and so is changing what is live: renaming, deleting or re-pathing a published entry, withdrawing a scheduled revision, publishing masters, deleting media. fourEyes on: whoever approves or publishes a revision must be another person than its last editor and its submitter (403 FOUR_EYES_REQUIRED); an agent key counts as the person who issued it. Both off by default. Call it before publishing to know whether to stop after submitting. Any agent key scope.',
    input: {},
    output: approvalPolicySchema.extend({ whatAgentsMayDo: z.array(z.string()).describe('What the policy lets an agent key do, in words.') }),
    annotations: READ_ONLY,
    run: async (_args, { api }) => {
      const policy = await api.get<{ humanApproval: boolean; fourEyes: boolean }>('/project/approval-policy');
      const notes = [
        policy.humanApproval ? 'humanApproval is on: submit revisions for review and stop there; a person approves or publishes them, and renames, deletes or withdraws live content.' : null,
        policy.fourEyes ? 'fourEyes is on: a revision saved or submitted by you, or by the person who issued your key (or with another key of theirs), must be approved or published by someone else.' : null,
      ].filter((n): n is string => n !== null);
      return { ...policy, whatAgentsMayDo: notes.length > 0 ? notes : ['Neither rule is on: an agent key may save, submit and publish.'] };
    },
  }),

  defineTool({
    name: 'set_approval_policy',
    title: 'Change the approval policy',
    description:
      'Turns humanApproval and/or fourEyes on or off (a field left out is unchanged); returns the policy after the change. Needs a tenant_admin console session: agent keys are refused (the policy is what restrains them), so this tool works only when the MCP server runs with ANNALS_SESSION_TOKEN and ANNALS_PROJECT_ID. Every change is recorded in the audit log.',
    input: {
      humanApproval: z.boolean().optional().describe('Agent keys may save and submit, but not approve or publish.'),
      fourEyes: z.boolean().optional().describe('The approver or publisher differs from the revision\'s last editor and submitter.'),
    },
    output: approvalPolicySchema,
    annotations: DESTRUCTIVE,
    run: async (args, context) => {
      return sessionRequest(context, 'set_approval_policy', 'tenant_admin', 'PUT', '/project/approval-policy', { body: args });
    },
  }),

  defineTool({
    name: 'patch_project_content_locales',
    title: 'Change content locales',
    description:
      'Changes the project\'s content locales and/or default locale. Needs a tenant_admin console session: agent keys are refused whatever their scope (spec 4.4), so this tool works only when the MCP server runs with ANNALS_SESSION_TOKEN and ANNALS_PROJECT_ID; otherwise it explains what to configure. Returns {locales, defaultLocale} after the change. The default locale must be one of the locales.',
    input: {
      locales: z.array(localeCode).min(1).max(30).optional().describe('The full list of content locales, e.g. ["en", "ja"]; left out: unchanged.'),
      defaultLocale: localeCode.optional().describe('The default locale (one of the locales); left out: unchanged.'),
    },
    output: contentLocalesSchema,
    annotations: DESTRUCTIVE,
    run: async (args, context) => {
      return sessionRequest(context, 'patch_project_content_locales', 'tenant_admin', 'PATCH', '/project/content-locales', { body: args });
    },
  }),
];
