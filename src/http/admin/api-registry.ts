import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { jsonBody } from '../middleware/json-body.ts';
import { validationError } from '../errors/error-factory.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One admin route: what it takes and answers. The same schemas validate requests and document them. */
export interface ApiRoute<Body extends z.ZodType | undefined = undefined, Query extends z.ZodType | undefined = undefined> {
  method: Method;
  /** Koa style, relative to /admin/v1: '/form-sets/:formSetId'. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** 'none' for open routes (sign-in, login branding); default: agent key or session. */
  auth?: 'none' | 'credentials';
  body?: Body;
  query?: Query;
  /**
   * Status code to description, or to a description and the schema of the JSON answer; the error envelope
   * is documented for every route.
   */
  responses: Record<number, string | { description: string; schema: z.ZodType }>;
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

  add<Body extends z.ZodType | undefined = undefined, Query extends z.ZodType | undefined = undefined>(
    router: Router,
    route: ApiRoute<Body, Query>,
    handler: (ctx: Context, input: { body: Parsed<Body>; query: Parsed<Query> }) => Promise<void>,
  ): void {
    this.routes.push(route as never);
    const middleware = async (ctx: Context) => {
      const body = route.body ? parse(route.body, (ctx.request as { body?: unknown }).body ?? {}, 'body') : undefined;
      const query = route.query ? parse(route.query, ctx.query, 'query') : undefined;
      await handler(ctx, { body: body as Parsed<Body>, query: query as Parsed<Query> });
    };
    const stack = route.body ? [jsonBody(route.bodyLimitBytes === undefined ? {} : { limitBytes: route.bodyLimitBytes }), middleware] : [middleware];
    (router[route.method] as (path: string, ...mw: unknown[]) => Router)(route.path, ...stack);
  }
}

function parse(schema: z.ZodType, value: unknown, where: 'body' | 'query'): unknown {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join('.') || where;
  throw validationError(`${field}: ${issue.message}`);
}

const errorEnvelope = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', examples: ['VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'PLAN_REQUIRED', 'NOT_FOUND', 'CONFLICT', 'REVISION_CONFLICT', 'IDEMPOTENCY_IN_PROGRESS', 'RATE_LIMITED'] },
        message: { type: 'string' },
        hint: { type: 'string' },
        retryable: { type: 'boolean', description: 'false: the input must change before retrying; true: the same request may succeed when sent again after Retry-After.' },
      },
    },
  },
};

/** The OpenAPI 3.1 document of every registered route. */
export function openApiDocument(registry: ApiRegistry, info: { version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of registry.routes) {
    const path = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const parameters: unknown[] = [...route.path.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: route.textParams?.includes(name!) ? { type: 'string' } : { type: 'string', format: 'uuid' },
    }));
    if (route.query) {
      const schema = toSchema(route.query) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        parameters.push({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: property });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      const { description, schema } = typeof response === 'string' ? { description: response, schema: undefined } : response;
      const code = Number(status);
      responses[status] =
        code === 204 ? { description }
        : code >= 400 ? { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }
        : { description, content: { 'application/json': { schema: schema ? toSchema(schema, 'output') : { type: 'object' } } } };
    }
    responses['default'] = { description: 'Error, in the envelope of spec section 7', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    paths[path] ??= {};
    paths[path]![route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(route.auth === 'none' ? { security: [] } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(route.body) } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'annals admin and agent API',
      version: info.version,
      description:
        'Admin/agent API of annals (spec section 4.3). Authenticate with `Authorization: Bearer <agent key>` (sk-agent-...) or a console session token from POST /auth/login; sessions send `X-Project-Id`. Creates accept an idempotency key as the `Idempotency-Key` header or the body field `idempotencyKey`; requests sent at once with one key run once (on one process the later ones wait for the first; a key being processed by another process answers 409 IDEMPOTENCY_IN_PROGRESS, retryable, with Retry-After). A write that loses too many races with simultaneous writes to the same item answers 409 CONFLICT with retryable: true and Retry-After, having written nothing. Paths match case-sensitively, as written here; a path with empty segments (`//`), dot segments, encoded slashes or backslashes (`%2F`, `%5C`) or malformed percent escapes is refused with 400 VALIDATION_ERROR before routing and authentication. JSON bodies may be sent with Content-Encoding gzip, deflate or br (limits count decoded bytes); a body that does not decode is 400 VALIDATION_ERROR, an unknown coding 415 UNSUPPORTED_MEDIA_TYPE; arrays and objects nested more than 64 levels deep are 400 VALIDATION_ERROR. Under overload any request may be answered 503 SERVICE_UNAVAILABLE with retryable: true and Retry-After.',
    },
    servers: [{ url: '/admin/v1' }],
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas: { Error: errorEnvelope } },
    paths,
  };
}

function toSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  return json;
}
