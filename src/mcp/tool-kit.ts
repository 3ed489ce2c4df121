import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { HelpCorpus } from '../help/help-corpus.ts';
import { AdminApiError, type AdminApiClient, type RequestOptions } from './admin-api-client.ts';
import { ToolFailure } from './tool-result.ts';

/** What every tool works with. */
export interface ToolContext {
  api: AdminApiClient;
  help: HelpCorpus;
  /** stdio: a local process with its own settings; http: the service's /admin/v1/mcp, called with an agent key. */
  transport: 'stdio' | 'http';
  /** The service's root URL, without a trailing slash: public URLs are `${serviceUrl}/public/...`. */
  serviceUrl: string;
}

export interface ToolDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  /** What it does, when to use it, what it returns, what it needs (scope, plan, session), what comes next. */
  description: string;
  input: Shape;
  /**
   * What a successful call returns (the tool's outputSchema; the result carries it as structuredContent):
   * the admin API answer's own schema where the tool returns it as the service answered.
   */
  output: z.ZodObject;
  annotations: ToolAnnotations;
  run(args: z.output<z.ZodObject<Shape>>, context: ToolContext): Promise<unknown>;
}

/** Declares a tool; the identity function, for type inference of `run`'s arguments. */
export function defineTool<Shape extends z.ZodRawShape>(tool: ToolDefinition<Shape>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/**
 * One object schema for a result that is one of two objects (a dry run's plan, or what was created):
 * a key both have takes either's value, a key only one has is optional. MCP output schemas must be
 * objects, not unions of them.
 */
export function eitherObject(a: z.ZodObject, b: z.ZodObject): z.ZodObject {
  const keys = new Set([...Object.keys(a.shape), ...Object.keys(b.shape)]);
  const shape: Record<string, z.ZodType> = {};
  for (const key of keys) {
    const [x, y] = [a.shape[key] as z.ZodType | undefined, b.shape[key] as z.ZodType | undefined];
    shape[key] = x && y ? z.union([x, y]) : (x ?? y)!.optional();
  }
  return z.object(shape);
}

/** Hints for tools that only read. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Hints for tools that add or change something without destroying what exists. */
export const WRITES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
/** Hints for tools that replace or remove something. */
export const DESTRUCTIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

// ---- shared parameters ---------------------------------------------------------------------------

export const uuid = (what: string) => z.uuid({ error: `must be ${what} (a UUID)` });

export const idempotencyKey = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe('Optional idempotency key: resending the same key returns the first result instead of creating a duplicate (safe retries).');

export const formSetRef = {
  formSetId: uuid('a form set id').optional().describe('The form set\'s id (from list_form_sets). Give this or formSetSlug.'),
  formSetSlug: z.string().min(1).max(200).optional().describe('The form set\'s slug, e.g. "blog" (resolved with list_form_sets). Give this or formSetId.'),
};

export const masterRef = {
  masterId: uuid('a master entity id').optional().describe('The master entity\'s id (from list_master_entities). Give this or masterKey.'),
  masterKey: z.string().min(1).max(200).optional().describe('The master entity\'s key, e.g. "blog_category". Give this or masterId.'),
};

/** The form set's id from {formSetId} or {formSetSlug}. */
export async function resolveFormSetId(context: ToolContext, args: { formSetId?: string | undefined; formSetSlug?: string | undefined }): Promise<string> {
  if (args.formSetId) return args.formSetId;
  if (!args.formSetSlug) throw new ToolFailure('VALIDATION_ERROR', 'Give formSetId or formSetSlug.', 'list_form_sets lists every form set with its id and slug.');
  const { items } = await context.api.get<{ items: Array<{ id: string; slug: string }> }>('/form-sets');
  const found = items.find((f) => f.slug === args.formSetSlug);
  if (!found) throw new ToolFailure('NOT_FOUND', `No form set with slug ${JSON.stringify(args.formSetSlug)} in this project.`, `The form sets are: ${items.map((f) => f.slug).join(', ') || 'none yet (apply a template or blueprint first)'}.`);
  return found.id;
}

/** The master's id from {masterId} or {masterKey}. */
export async function resolveMasterId(context: ToolContext, args: { masterId?: string | undefined; masterKey?: string | undefined }): Promise<string> {
  if (args.masterId) return args.masterId;
  if (!args.masterKey) throw new ToolFailure('VALIDATION_ERROR', 'Give masterId or masterKey.', 'list_master_entities lists every master entity with its id and key.');
  const { items } = await context.api.get<{ items: Array<{ id: string; key: string }> }>('/master-entities');
  const found = items.find((m) => m.key === args.masterKey);
  if (!found) throw new ToolFailure('NOT_FOUND', `No master entity with key ${JSON.stringify(args.masterKey)} in this project.`, `The master entities are: ${items.map((m) => m.key).join(', ') || 'none yet'}.`);
  return found.id;
}

/**
 * Tools the spec reserves to user sessions (agent keys are refused by the service whatever their scope):
 * without a configured session, explain what to configure instead of calling the service.
 */
export function requireSession(context: ToolContext, tool: string, role: 'tenant_admin' | 'console user'): void {
  if (context.api.hasSession) return;
  const who = role === 'tenant_admin' ? 'a tenant_admin console session' : 'a console user session';
  if (context.transport === 'http') {
    throw new ToolFailure(
      'FORBIDDEN',
      `${tool} needs ${who}: agent keys are refused for it (spec 4.4), and the remote MCP endpoint /admin/v1/mcp authenticates with an agent key only.`,
      'Run the stdio MCP server (npm run mcp) with ANNALS_SESSION_TOKEN (a token from POST /admin/v1/auth/login) and ANNALS_PROJECT_ID, or make the change in the console.',
    );
  }
  throw new ToolFailure(
    'FORBIDDEN',
    `${tool} needs ${who}: agent keys are refused for it (spec 4.4), and this MCP server has no session configured.`,
    `Sign in with POST ${context.api.adminBase}/v1/auth/login ({email, password}) as ${role === 'tenant_admin' ? 'a tenant_admin' : 'a console user'}, then start the MCP server with ANNALS_SESSION_TOKEN=<token> and ANNALS_PROJECT_ID=<project id>.`,
  );
}

/** The project this MCP server acts in. */
export async function projectId(context: ToolContext): Promise<string> {
  const info = await context.api.get<{ projectId: string }>('/project/public-api-info');
  return info.projectId;
}

/**
 * A request the spec reserves to user sessions (agent keys are refused whatever their scope): with the configured
 * session; without one, with the agent key all the same, so that the service refuses it (403) and records the
 * refused write in its audit log, as it records every refused write; the tool then explains what to configure.
 */
export async function sessionRequest<T = Record<string, unknown>>(
  context: ToolContext,
  tool: string,
  role: 'tenant_admin' | 'console user',
  method: string,
  path: string,
  options: Omit<RequestOptions, 'as'> = {},
): Promise<T> {
  if (context.api.hasSession) return context.api.request<T>(method, path, { ...options, as: 'session' });
  if (!context.api.hasAgentKey) requireSession(context, tool, role);
  try {
    return await context.api.request<T>(method, path, { ...options, as: 'default' });
  } catch (error) {
    if (error instanceof AdminApiError && error.status === 403 && error.code === 'FORBIDDEN') requireSession(context, tool, role);
    throw error;
  }
}
