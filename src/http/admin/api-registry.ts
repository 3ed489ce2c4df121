import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { jsonBody } from '../middleware/json-body.ts';
import { urlencodedForm } from '../middleware/urlencoded-form.ts';
import { ErrorCode, validationError } from '../errors/error-factory.ts';
import { errorEnvelopeSchema } from './error-envelope-schema.ts';
import { assertCan, PERMISSIONS, type Action } from '../../domain/access/permissions.ts';
import { principalOf } from './admin-context.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The admin document's tags, each with what it groups; every route names one. */
export const ADMIN_TAGS = {
  Sessions: "Console sign-in: e-mail and password for a session token, or the organisation's identity provider.",
  'Single sign-on': "The tenant's OpenID Connect sign-in: its provider, client, allowed e-mail domains, groups and roles.",
  'Second factor': 'A second factor for password sign-in: authenticator apps (TOTP), passkeys (WebAuthn) and recovery codes; the organisation\'s policy.',
  'Console login': 'The console login page: branding, appearance and the IP allowlist.',
  Project: 'The project: overview, content locales, site settings, custom domains and the public API base.',
  Keys: 'Agent and public API keys.',
  Members: 'Console users of the tenant.',
  Roles: "The organisation's own roles as sets of capabilities (who writes, who approves, who administers), optionally limited to form sets.",
  'Form sets': 'Form sets: the field definitions entries are written against.',
  Entries: 'Entries of a form set, their slugs, import metadata, assignee and translation.',
  'Working copies': "A console user's unsaved typing in an entry, kept on the server between revisions, and who else has some.",
  Revisions: 'Revisions of entries and the approval workflow: submit, approve, reject, withdraw, reopen, publish, schedule, preview.',
  History: 'The audit trail: an entry\'s events, revision diffs, restores and the project audit log.',
  'As of': 'As-of reads: what the public API served at an instant, and an entry\'s workflow state then, from the log.',
  Audit: 'The log\'s Merkle tree: signed checkpoints (C2SP tlog-checkpoint), inclusion and consistency proofs (RFC 9162).',
  Masters: 'Master entities and their records (the values of select fields).',
  Blueprints: 'Form and master blueprints and the built-in form set templates.',
  Media: 'Media assets: upload, list, describe, delete.',
  Webhooks: 'Webhooks, their delivery history, redelivery and Send Test (Standard plan and above).',
  'Contact forms': 'Contact forms and the submissions they receive.',
  MCP: 'The MCP tool server over Streamable HTTP.',
  Operations: "Projections, outboxes, the version and adapters (tenant_admin sessions); retry, skip and rebuild for the service's operators.",
} as const;
export type AdminTag = keyof typeof ADMIN_TAGS;

/** The error statuses an admin route can answer in the error envelope (spec section 7). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 429 | 500 | 503;

/**
 * A success (or a non-envelope) answer: its JSON schema (in `mediaType`, default application/json), or `empty`
 * for an answer without a body (204, 202); `headers`: the headers it carries, by name with what each holds (a
 * 301's Location).
 */
export type ApiResponse = ({ description: string; schema: z.ZodType; mediaType?: string } | { description: string; empty: true }) & { headers?: Record<string, string> };

/** One admin route: what it takes and answers. The same schemas validate requests and document them. */
export interface ApiRoute<Body extends z.ZodType | undefined = undefined, Query extends z.ZodType | undefined = undefined> {
  method: Method;
  /** Koa style, relative to /admin/v1: '/form-sets/:formSetId'. */
  path: string;
  operationId: string;
  /** One line: what the operation does; the document's summary and the start of its description. */
  summary: string;
  tag: AdminTag;
  /** 'none' for open routes (sign-in, login branding); default: agent key or session. */
  auth?: 'none' | 'credentials';
  /**
   * The permission the caller needs (src/domain/access/permissions.ts), checked here, once, before the request
   * is read any further: 403 FORBIDDEN naming it, recorded as a refused write for writes. Services check only
   * what depends on the data (whose record, which policy). Every route declares one (the type requires it, and
   * test/codebase/route-permissions.test.ts checks the registered routes):
   * - an action: the caller needs it;
   * - 'none': no permission beyond the route's `auth`: open to anyone (auth 'none': sign-in, login branding) or
   *   to any signed-in caller (its own session, its own notice preferences, the MCP endpoint, whose tools call
   *   these routes and meet their permissions).
   */
  permission: Action | 'none';
  /**
   * 'domain': the permission is enforced by the domain's decider instead of here, because its refusal says more
   * than the table's (why, and which record: the audit trail keeps the refusal's subject as verified) or comes
   * after a check of the data the caller must see first. The registry documents the permission (x-permission)
   * and does not check it again. Default: checked here.
   */
  permissionCheckedBy?: 'domain';
  body?: Body;
  /** How the body is sent: JSON (default), or an HTML form's encoding (what a provider's back-channel POST sends). */
  bodyMediaType?: 'application/json' | 'application/x-www-form-urlencoded';
  query?: Query;
  /** Every answer that is not the error envelope, by status, each with the schema the handler's answer satisfies. */
  responses: Partial<Record<200 | 201 | 202 | 204 | 207, ApiResponse>> & Record<number, ApiResponse>;
  /**
   * The error codes the route itself can answer, by status, beyond those every route of its kind can
   * (see commonErrors): 409 CONFLICT on a slug clash, 403 PLAN_REQUIRED below a plan, ... `{}` when none.
   */
  errors: Partial<Record<ErrorStatus, readonly ErrorCode[]>>;
  /** Takes an Idempotency-Key header (default: when the body has an idempotencyKey field). */
  idempotent?: boolean;
  /** Another request body the route takes beside JSON (multipart uploads), documented only. */
  alternativeBodies?: Record<string, z.ZodType>;
  /** JSON body limit, default 1 MiB. */
  bodyLimitBytes?: number;
  /** Path parameters that are not UUIDs (template ids, record values), documented as plain strings. */
  textParams?: readonly string[];
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/**
 * Registers routes on a router and remembers them for the OpenAPI document, so the document can never
 * drift from what the handlers accept.
 */
export class ApiRegistry {
  readonly routes: ApiRoute<z.ZodType | undefined, z.ZodType | undefined>[] = [];

  /**
   * `onWriteError`: called with the error of every write (any method but GET) whose handler threw, before the
   * error is answered; the admin API records refused writes with it (refusal-audit.ts).
   */
  constructor(
    private readonly options: {
      onWriteError?: (ctx: Context, operationId: string, error: unknown) => Promise<void>;
      /** Read your writes: waits (bounded) until `projections` have folded `position` (see wrote). */
      settle?: Settle;
    } = {},
  ) {}

  add<Body extends z.ZodType | undefined = undefined, Query extends z.ZodType | undefined = undefined>(
    router: Router,
    route: ApiRoute<Body, Query>,
    handler: (ctx: Context, input: { body: Parsed<Body>; query: Parsed<Query> }) => Promise<void>,
  ): void {
    this.routes.push(route as never);
    const onWriteError = route.method === 'get' ? undefined : this.options.onWriteError;
    const middleware = async (ctx: Context) => {
      if (route.permission !== 'none' && route.permissionCheckedBy !== 'domain') {
        try {
          assertCan(principalOf(ctx), route.permission);
        } catch (error) {
          await onWriteError?.(ctx, route.operationId, error);
          throw error;
        }
      }
      (ctx.state as { [SETTLE]?: Settle })[SETTLE] = this.options.settle;
      const body = route.body ? parse(route.body, (ctx.request as { body?: unknown }).body ?? {}, 'body') : undefined;
      const query = route.query ? parse(route.query, ctx.query, 'query') : undefined;
      try {
        await handler(ctx, { body: body as Parsed<Body>, query: query as Parsed<Query> });
      } catch (error) {
        await onWriteError?.(ctx, route.operationId, error);
        throw error;
      }
      // Read your writes, here once for every route: answered when the read models show what the handler wrote.
      const written = writtenOf(ctx);
      if (written && this.options.settle) await this.options.settle(written.position, [...written.projections]);
    };
    const parser = route.bodyMediaType === 'application/x-www-form-urlencoded' ? urlencodedForm({ limitBytes: route.bodyLimitBytes ?? 16 * 1024 }) : jsonBody(route.bodyLimitBytes === undefined ? {} : { limitBytes: route.bodyLimitBytes });
    const stack = route.body ? [parser, middleware] : [middleware];
    (router[route.method] as (path: string, ...mw: unknown[]) => Router)(route.path, ...stack);
  }
}

const WRITTEN = Symbol('written');
const SETTLE = Symbol('settle');
type Written = { position: bigint; projections: Set<string> };
type Settle = (position: bigint, projections: readonly string[]) => Promise<void>;
const writtenOf = (ctx: Context): Written | undefined => (ctx.state as { [WRITTEN]?: Written })[WRITTEN];

/**
 * A handler's write that its answer must reflect (read your writes): the registry waits, once the handler has
 * returned and before the answer is sent, until `projections` have folded the latest position given (bounded by
 * the settle option: READ_YOUR_WRITES_MS). Use cases that settle their own writes (ContentService, ...) need not.
 */
export function wrote(ctx: Context, position: bigint, projections: readonly string[]): void {
  const state = ctx.state as { [WRITTEN]?: Written };
  const written = (state[WRITTEN] ??= { position, projections: new Set() });
  if (position > written.position) written.position = position;
  for (const name of projections) written.projections.add(name);
}

function parse(schema: z.ZodType, value: unknown, where: 'body' | 'query'): unknown {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join('.') || where;
  throw validationError(`${field}: ${issue.message}`);
}

/**
 * The errors any route of its kind can answer, whatever it does: every route 429, 500 and 503 (too many
 * requests in progress from one client, a fault, a store unavailable, shutting down); a route with credentials 401, 429 (agent key rate limit), 403 (scope,
 * role, console IP allowlist), 404 (an X-Project-Id the session cannot use) and 400 (a session without
 * X-Project-Id); a route with path parameters 404; a route with a query or body 400; a body 413 and 415;
 * an idempotent create 409 (its key resent with another request).
 */
function commonErrors(route: ApiRoute<z.ZodType | undefined, z.ZodType | undefined>, idempotent: boolean): Partial<Record<ErrorStatus, ErrorCode[]>> {
  // Any request may be refused before its route: 429 beyond the requests in progress of one client (behind a
  // proxy), 503 under overload or while shutting down.
  const errors: Partial<Record<ErrorStatus, ErrorCode[]>> = { 429: ['RATE_LIMITED'], 500: ['INTERNAL_ERROR'], 503: ['SERVICE_UNAVAILABLE'] };
  const add = (status: ErrorStatus, code: ErrorCode) => {
    const codes = (errors[status] ??= []);
    if (!codes.includes(code)) codes.push(code);
  };
  if (route.auth !== 'none') {
    add(400, 'VALIDATION_ERROR');
    add(401, 'UNAUTHORIZED');
    add(403, 'FORBIDDEN');
    add(404, 'NOT_FOUND');
    add(429, 'RATE_LIMITED');
  }
  if (route.path.includes(':')) add(404, 'NOT_FOUND');
  if (route.query || route.body) add(400, 'VALIDATION_ERROR');
  // A write that lost too many races with simultaneous writes (retryable, Retry-After); an idempotency key
  // resent with another request, or one still being processed elsewhere.
  if (route.method !== 'get' && route.auth !== 'none') add(409, 'CONFLICT');
  if (idempotent) {
    add(409, 'CONFLICT');
    add(409, 'IDEMPOTENCY_IN_PROGRESS');
  }
  if (route.body) {
    add(413, 'PAYLOAD_TOO_LARGE');
    add(415, 'UNSUPPORTED_MEDIA_TYPE');
  }
  return errors;
}

const ERROR_DESCRIPTIONS: Record<ErrorStatus, string> = {
  400: 'Invalid or missing parameter, header or body field (the message names it)',
  401: 'Credentials missing, invalid, revoked or expired',
  403: 'The key\'s scope, the role, the console IP allowlist or the plan does not allow this',
  404: 'No such resource in this project',
  405: 'Method not allowed here',
  409: 'Conflicts with the current state (a taken slug or key, a stale revision)',
  413: 'The request body is larger than the route accepts',
  415: 'The request body\'s Content-Type is not one the route takes',
  429: 'Rate limit exceeded (the agent key\'s, sign-in throttling, or requests in progress from one client): retry after Retry-After seconds',
  500: 'A fault on the service\'s side',
  503: 'The service or one of its stores is temporarily unavailable, or it is shutting down',
};

const ERROR_HEADERS: Partial<Record<ErrorStatus, Record<string, unknown>>> = {
  401: { 'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } } },
  405: { Allow: { description: 'The methods the path takes', schema: { type: 'string' } } },
  409: { 'Retry-After': { description: 'With retryable: true, seconds to wait before sending the same request again', schema: { type: 'integer', minimum: 0 } } },
  429: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } } },
  503: { 'Retry-After': { description: 'With retryable: true, seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } } },
};

/** The name of the component schema of an error envelope limited to these codes: ErrorNotFound, ErrorForbiddenOrPlanRequired. */
function errorSchemaName(codes: readonly string[]): string {
  const pascal = (code: string) => code.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());
  return `Error${codes.map(pascal).join('Or')}`;
}

/**
 * The error envelope schema of each component name, made once per process so that its conversion is cached
 * (jsonSchemaOf) across documents. A name stands for one list of codes: the codes come in CODE_ORDER, and no
 * code's PascalCase word is or starts with "Or".
 */
const errorEnvelopes = new Map<string, z.ZodType>();

function errorEnvelopeOf(name: string, codes: readonly ErrorCode[]): z.ZodType {
  let schema = errorEnvelopes.get(name);
  if (!schema) errorEnvelopes.set(name, (schema = errorEnvelopeSchema(codes)));
  return schema;
}

/** The OpenAPI 3.1 document of every registered route. */
export function openApiDocument(registry: ApiRegistry, info: { version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const errorSchemas: Json = {};
  const errorResponses: Json = {};
  // The named answer schemas (`.meta({id})`), each once.
  const answerSchemas: Json = {};
  for (const route of registry.routes) {
    const path = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const parameters: unknown[] = [...route.path.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: route.textParams?.includes(name!) ? { type: 'string' } : { type: 'string', format: 'uuid' },
    }));
    if (route.query) {
      const schema = toSchema(route.query) as { properties?: Record<string, { description?: string }>; required?: string[] };
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        const { description, ...rest } = property;
        parameters.push({ name, in: 'query', required: schema.required?.includes(name) ?? false, ...(description ? { description } : {}), schema: rest });
      }
    }
    const body = route.body ? (toSchema(route.body) as { properties?: Record<string, unknown> }) : undefined;
    const idempotent = route.idempotent ?? body?.properties?.['idempotencyKey'] !== undefined;
    if (idempotent) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
    if (route.auth !== 'none') parameters.push({ $ref: '#/components/parameters/ProjectId' });

    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(route.responses) as Array<[string, ApiResponse]>) {
      const headers = response.headers ? { headers: Object.fromEntries(Object.entries(response.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) } : {};
      responses[status] = 'empty' in response ? { description: response.description, ...headers } : { description: response.description, ...headers, content: { [response.mediaType ?? 'application/json']: { schema: toSchema(response.schema, 'output', answerSchemas) } } };
    }
    const errors = commonErrors(route, idempotent);
    for (const [status, codes] of Object.entries(route.errors) as Array<[string, readonly ErrorCode[]]>) {
      const merged = (errors[Number(status) as ErrorStatus] ??= []);
      for (const code of codes) if (!merged.includes(code)) merged.push(code);
    }
    for (const [status, unordered] of Object.entries(errors) as Array<[string, ErrorCode[]]>) {
      const codes = CODE_ORDER.filter((code) => unordered.includes(code));
      const name = errorSchemaName(codes);
      errorSchemas[name] ??= toSchema(errorEnvelopeOf(name, codes), 'output');
      const envelope = { $ref: `#/components/schemas/${name}` };
      const own = responses[status] as { description: string; content?: { 'application/json': { schema: unknown } } } | undefined;
      if (own?.content) {
        responses[status] = { description: `${own.description}; or ${ERROR_DESCRIPTIONS[Number(status) as ErrorStatus]}`, content: { 'application/json': { schema: { anyOf: [own.content['application/json'].schema, envelope] } } } };
        continue;
      }
      // One response component per status and codes: operations refer to it.
      const responseName = `Http${status}${name.slice('Error'.length)}`;
      const headers = ERROR_HEADERS[Number(status) as ErrorStatus];
      errorResponses[responseName] ??= { description: `${ERROR_DESCRIPTIONS[Number(status) as ErrorStatus]}: ${codes.join(', ')}`, ...(headers ? { headers } : {}), content: { 'application/json': { schema: envelope } } };
      responses[status] = { $ref: `#/components/responses/${responseName}` };
    }
    const requestBody = route.body
      ? {
          required: true,
          content: {
            [route.bodyMediaType ?? 'application/json']: { schema: body },
            ...Object.fromEntries(Object.entries(route.alternativeBodies ?? {}).map(([type, schema]) => [type, { schema: toSchema(schema) }])),
          },
        }
      : undefined;
    paths[path] ??= {};
    paths[path]![route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      description: `${route.summary}. ${credentialsNote(route)}`,
      tags: [route.tag],
      ...(route.auth === 'none' ? { security: [] } : {}),
      ...(route.permission !== 'none' ? { 'x-permission': route.permission } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b))),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'annals admin and agent API',
      version: info.version,
      description:
        'Admin/agent API of annals (spec section 4.3). Authenticate with `Authorization: Bearer <agent key>` (sk-agent-...) or a console session token from POST /auth/login; sessions send `X-Project-Id`. Creates accept an idempotency key as the `Idempotency-Key` header or the body field `idempotencyKey`; requests sent at once with one key run once (on one process the later ones wait for the first; a key being processed by another process answers 409 IDEMPOTENCY_IN_PROGRESS, retryable, with Retry-After). A write that loses too many races with simultaneous writes to the same item answers 409 CONFLICT with retryable: true and Retry-After, having written nothing. Paths match case-sensitively, as written here; a path with empty segments (`//`), dot segments, encoded slashes or backslashes (`%2F`, `%5C`) or malformed percent escapes is refused with 400 VALIDATION_ERROR before routing and authentication. JSON bodies may be sent with Content-Encoding gzip, deflate or br (limits count decoded bytes); a body that does not decode is 400 VALIDATION_ERROR, an unknown coding 415 UNSUPPORTED_MEDIA_TYPE; arrays and objects nested more than 64 levels deep are 400 VALIDATION_ERROR. Under overload any request may be answered 503 SERVICE_UNAVAILABLE with retryable: true and Retry-After. Every answer carries Cache-Control: no-store. Errors come in the envelope `{error: {code, message, hint?, retryable?}}`; each operation lists the codes of each status it can answer.',
      license: { name: 'UNLICENSED', identifier: 'LicenseRef-UNLICENSED' },
      contact: { name: 'annals maintainers' },
    },
    servers: [{ url: '/admin/v1', description: 'The admin API of the service that serves this document.' }],
    security: [{ bearer: [] }, { sessionCookie: [] }],
    tags: Object.entries(ADMIN_TAGS).map(([name, description]) => ({ name, description })),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An agent key (sk-agent-...) or a console session token from POST /auth/login.' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: '__Host-annals-session',
          description:
            'The console\'s session cookie, set by POST /auth/login with cookie: true (HttpOnly, SameSite=Strict; `annals-session` without Secure over plain HTTP). Read only when no Authorization header is sent. Every write made with it (any method but GET, HEAD and OPTIONS) must send the session\'s CSRF token (from the login answer or GET /auth/session) as X-CSRF-Token and, when the browser sends them, a same-origin Sec-Fetch-Site and Origin; otherwise 403 FORBIDDEN.',
        },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Resending a create with the same key answers the first result instead of creating again (the body field idempotencyKey does the same).',
          schema: { type: 'string', minLength: 1, maxLength: 200 },
        },
        ProjectId: {
          name: 'X-Project-Id',
          in: 'header',
          required: false,
          description: 'Console sessions: the project to act in (400 on project routes without it). Agent keys are bound to their project and need none.',
          schema: { type: 'string', format: 'uuid' },
        },
      },
      schemas: { ...sorted(answerSchemas), ...sorted(errorSchemas) },
      responses: sorted(errorResponses),
    },
    paths,
  };
}

const CODE_ORDER = Object.values(ErrorCode);

const sorted = (record: Json): Json => Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));

function credentialsNote(route: ApiRoute<z.ZodType | undefined, z.ZodType | undefined>): string {
  if (route.auth === 'none') return 'No credentials needed.';
  const permission = route.permission === 'none' ? '' : ` Permission: \`${route.permission}\` (${PERMISSIONS[route.permission].label}); 403 FORBIDDEN ${route.permissionCheckedBy === 'domain' ? 'says why' : 'names it'} when the caller lacks it.`;
  return `Credentials: an agent key, or a console session token with X-Project-Id.${permission}`;
}

type Json = Record<string, unknown>;

/**
 * A zod schema as JSON Schema 2020-12: `input` documents what a request may send, `output` what an answer
 * holds. Without `components`, self-contained: named schemas (`.meta({id})`) are inlined. With it, each
 * named schema of an answer goes there once and is referenced as #/components/schemas/<id>, so clients
 * get one type per named shape.
 */
export function toSchema(schema: z.ZodType, io: 'input' | 'output' = 'input', components?: Json): Json {
  const { $schema: _ignored, $defs = {}, ...json } = jsonSchemaOf(schema, io);
  if (io === 'input' || !components) return inline(json, $defs);
  for (const [id, definition] of Object.entries($defs)) {
    const named = refsTo(definition);
    if (components[id] !== undefined && JSON.stringify(components[id]) !== JSON.stringify(named)) throw new Error(`Two different answer schemas are named ${id}.`);
    components[id] = named;
  }
  return refsTo(json);
}

/**
 * z.toJSONSchema's answer for a schema object, converted once per process: the document is built at every
 * service start from the routes' module-level schemas (~90 ms of conversion otherwise; the test suite starts
 * hundreds of services). Never handed out as is: inline() and refsTo() copy every node they return.
 */
const jsonSchemas = { input: new WeakMap<z.ZodType, ConvertedSchema>(), output: new WeakMap<z.ZodType, ConvertedSchema>() };
type ConvertedSchema = Json & { $defs?: Record<string, Json> };

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): ConvertedSchema {
  let converted = jsonSchemas[io].get(schema);
  if (!converted) {
    converted = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as ConvertedSchema;
    jsonSchemas[io].set(schema, converted);
  }
  return converted;
}

const DEF_REF = /^#\/\$defs\/(.+)$/;

function inline(node: unknown, defs: Record<string, Json>): Json {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    const { $ref, ...rest } = value as Json;
    const id = typeof $ref === 'string' ? DEF_REF.exec($ref)?.[1] : undefined;
    const base = id === undefined ? ($ref === undefined ? {} : { $ref }) : (walk(defs[id]) as Json);
    return { ...base, ...Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, walk(v)])) };
  };
  return walk(node) as Json;
}

function refsTo(node: unknown): Json {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value as Json).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? v.replace(DEF_REF, '#/components/schemas/$1') : walk(v)]),
    );
  };
  return walk(node) as Json;
}

/**
 * Waits now, inside the handler, for what it wrote so far (wrote): for a handler whose answer reads a read model
 * it has just written to. The registry's wait once the handler returns then finds it folded.
 */
export async function settleWritten(ctx: Context): Promise<void> {
  const written = writtenOf(ctx);
  const settle = (ctx.state as { [SETTLE]?: Settle })[SETTLE];
  if (written && settle) await settle(written.position, [...written.projections]);
}
