import type { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolContext, ToolDefinition } from './tool-kit.ts';
import { toolError, toolSuccess } from './tool-result.ts';
import { projectTools } from './tools/project-tools.ts';
import { schemaTools } from './tools/schema-tools.ts';
import { entryTools } from './tools/entry-tools.ts';
import { asOfTools } from './tools/as-of-tools.ts';
import { auditTools } from './tools/audit-tools.ts';
import { mediaTools } from './tools/media-tools.ts';
import { masterTools } from './tools/master-tools.ts';
import { helpTools } from './tools/help-tools.ts';
import { loginTools } from './tools/login-tools.ts';
import { blueprintTools } from './tools/blueprint-tools.ts';
import { contactFormTools } from './tools/contact-form-tools.ts';

/** The tool names of spec section 4.4, every one of which the server offers. */
export const SPEC_TOOL_NAMES = [
  'get_project_overview',
  'get_tenant_schema',
  'list_form_sets',
  'get_form_set_schema',
  'get_public_api_info',
  'list_entries',
  'get_entry',
  'create_entry',
  'update_entry',
  'list_revisions',
  'save_revision',
  'publish_revision',
  'submit_entry_for_review',
  'list_media',
  'upload_media',
  'list_master_entities',
  'get_master_entity',
  'list_master_records',
  'create_master_record',
  'update_master_record',
  'update_master_tree',
  'get_project_content_locales',
  'patch_project_content_locales',
  'translate_entry_locales',
  'search_admin_help',
  'get_admin_help_article',
  'ask_admin_help',
  'get_login_branding',
  'get_login_appearance',
  'update_login_appearance',
  'list_login_ip_allowlist',
  'add_login_ip_allowlist_entry',
  'delete_login_ip_allowlist_entry',
  'apply_form_blueprint',
  'validate_master_blueprint',
  'apply_master_blueprint',
  'apply_builtin_form_template',
  'create_contact_form',
  'update_contact_form',
] as const;

/** Every tool, in the order tools/list gives them. */
export const ALL_TOOLS: readonly ToolDefinition[] = [
  ...projectTools,
  ...schemaTools,
  ...entryTools,
  ...asOfTools,
  ...auditTools,
  ...mediaTools,
  ...masterTools,
  ...blueprintTools,
  ...contactFormTools,
  ...loginTools,
  ...helpTools,
];

export const SERVER_INSTRUCTIONS = `annals is a headless content backend. These tools act in one project through its admin API.
Typical job: get_project_overview, then get_tenant_schema (form sets, fields, locales). Without form sets, apply a built-in template (list_builtin_form_templates, apply_builtin_form_template) or a blueprint (validate_form_blueprint, apply_form_blueprint).
Writing content: create_entry (first revision, a draft) or save_revision (a new draft with ALL field values; merge: true to change only some), then submit_entry_for_review with its id and revision, then publish_revision with the same id and revision. Only published revisions are served by the public API (get_public_api_info).
Images and files: upload_media, then put the asset id in the field.
Errors come back as tool errors starting with the service's code (VALIDATION_ERROR, FORBIDDEN, PLAN_REQUIRED, NOT_FOUND, CONFLICT, REVISION_CONFLICT, RATE_LIMITED) with a hint: correct the input as the hint says. For how the service works, ask_admin_help.`;

/** A server offering every tool against the context's admin API. One per connection (stdio) or request (HTTP). */
export function createAnnalsMcpServer(context: ToolContext, info: { version: string } = { version: '0.1.0' }): McpServer {
  const server = new McpServer({ name: 'annals', title: 'annals content backend', version: info.version }, { instructions: SERVER_INSTRUCTIONS, capabilities: { tools: {} } });
  for (const tool of ALL_TOOLS) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, outputSchema: unnamed(tool.output), annotations: { title: tool.title, ...tool.annotations } },
      (async (args: Record<string, unknown>) => {
        try {
          return toolSuccess((await tool.run(args as never, context)) as Record<string, unknown>);
        } catch (error) {
          return toolError(error);
        }
      }) as never,
    );
  }
  return server;
}

/**
 * The schema without its own name: a named answer schema (`.meta({id})`) becomes a bare `$ref` into
 * `$defs` in JSON Schema, and MCP wants an outputSchema of `type: "object"` at its root. Named schemas
 * inside stay shared definitions.
 */
function unnamed(schema: z.ZodObject): z.ZodObject {
  return schema.extend({});
}
