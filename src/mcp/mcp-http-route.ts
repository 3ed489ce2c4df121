import { z } from 'zod';
import { Readable } from 'node:stream';
import type { Router } from '@koa/router';
import { newRouter } from '../http/router.ts';
import type { Context } from 'koa';
import type { HelpCorpus } from '../help/help-corpus.ts';
import { loopbackSender } from './loopback-sender.ts';
import { forbidden, methodNotAllowed } from '../http/errors/error-factory.ts';
import type { ApiRegistry } from '../http/admin/api-registry.ts';
import { type AdminDeps, principalOf } from '../http/admin/admin-context.ts';

export interface McpRouteOptions {
  /** MEDIA_MAX_BYTES: an upload_media call carries the file in base64, so a message may be that big and a third more. */
  mediaMaxBytes?: number | undefined;
  /** Default: the package's docs/help. */
  help?: HelpCorpus;
  /** Per admin call made by a tool; default 120 000 ms. */
  callTimeoutMs?: number;
}

/** Room for the JSON-RPC envelope and the other arguments beside a base64 file. */
const MESSAGE_OVERHEAD_BYTES = 1024 * 1024;
const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * The MCP SDK and the tool server (mcp-http-exchange.ts), loaded on the first MCP request rather than at every
 * start: ~0.25 s of CPU that a service nobody calls over MCP would pay each time it starts.
 */
let exchangeModule: Promise<typeof import('./mcp-http-exchange.ts')> | undefined;
const loadExchange = () => (exchangeModule ??= import('./mcp-http-exchange.ts'));

/**
 * The MCP tool server over Streamable HTTP at /admin/v1/mcp (spec 4.4, issue 8 item 6), so an agent can
 * use the tools without running a local process. Stateless: every POST carries JSON-RPC messages and is
 * answered with JSON (no session id, no server-sent stream); GET and DELETE answer 405, which MCP
 * clients take as "no stream, no session to end".
 *
 * Authentication is the admin API's own, run before this route: an agent key as `Authorization: Bearer`
 * (a console session is refused here: the session-only tools need the stdio server). Each tool call is
 * then made to the admin API of this same service over HTTP, on the socket address the MCP request
 * arrived on, with the caller's key: the same authentication, permissions, plan gates, validation and
 * rate limit as a direct call (so one tool call counts as one admin request more than the MCP message
 * itself against the key's rate limit).
 */
export function mcpRoute(deps: AdminDeps, api: ApiRegistry, options: McpRouteOptions = {}): Router {
  const router = newRouter();
  const maxRequestBodySize = options.mediaMaxBytes === undefined ? DEFAULT_MAX_MESSAGE_BYTES : Math.ceil(options.mediaMaxBytes / 3) * 4 + MESSAGE_OVERHEAD_BYTES;
  const tag = 'MCP';

  api.add(
    router,
    {
      method: 'post',
      path: '/mcp',
      operationId: 'mcp',
      permission: 'none',
      summary:
        'The MCP tool server over Streamable HTTP (stateless, JSON responses): JSON-RPC messages of the Model Context Protocol (initialize, tools/list, tools/call) with the tools of spec 4.4, authenticated with an agent key. Each tool calls this admin API with the caller\'s key. GET and DELETE answer 405: no event stream, no session',
      tag,
      responses: {
        200: { description: 'The JSON-RPC response (or a batch of them)', schema: jsonRpcResponse },
        202: { description: 'Accepted (notifications and responses carry no answer)', empty: true },
        400: { description: 'Not a JSON-RPC message of the protocol', schema: jsonRpcMessage },
        406: { description: 'The Accept header does not list application/json and text/event-stream', schema: jsonRpcMessage },
        413: { description: 'The message is larger than the endpoint takes', schema: jsonRpcMessage },
        415: { description: 'The body is not application/json', schema: jsonRpcMessage },
      },
      errors: {},
      idempotent: false,
    },
    async (ctx) => {
      const principal = principalOf(ctx);
      if (principal.kind !== 'agent') {
        throw forbidden('The MCP endpoint takes an agent key (Authorization: Bearer sk-agent-...), not a console session.', {
          hint: 'For the tools that need a user session, run the stdio MCP server (npm run mcp) with ANNALS_SESSION_TOKEN and ANNALS_PROJECT_ID.',
        });
      }
      const key = /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'))![1]!;
      const socket = ctx.req.socket;
      // The service's URL as the agent called it (Koa's ctx.origin is the Origin header).
      const serviceUrl = `${ctx.protocol}://${ctx.host}`;
      const { answerMcpRequest } = await loadExchange();
      const response = await answerMcpRequest({
        agentKey: key,
        serviceUrl,
        send: loopbackSender({ address: socket.localAddress!, port: socket.localPort! }, { host: ctx.host, protocol: ctx.protocol }, options.callTimeoutMs ?? 120_000),
        maxRequestBodySize,
        help: options.help,
        request: toWebRequest(ctx),
      });
      ctx.status = response.status;
      response.headers.forEach((value, name) => {
        if (name !== 'content-length') ctx.set(name, value);
      });
      ctx.set('Cache-Control', 'no-store');
      ctx.body = response.body.length > 0 ? response.body : '';
    },
  );

  // No server-sent event stream and no session to end: GET and DELETE answer 405 (said in POST's summary;
  // an operation that only ever fails is not one to document).
  for (const method of ['get', 'delete'] as const) {
    router[method]('/mcp', async () => {
      throw methodNotAllowed(['POST'], { hint: 'The MCP endpoint is stateless: send every message with POST.' });
    });
  }
  void deps;
  return router;
}

/** A JSON-RPC 2.0 message as the MCP transport answers it; `result` is the protocol's, per method. */
const jsonRpcMessage = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
});

/** One JSON-RPC response, or a batch of them. */
const jsonRpcResponse = z.union([jsonRpcMessage, z.array(jsonRpcMessage)]);

/** The Koa request as a web Request, its body streamed (the transport reads and bounds it). */
function toWebRequest(ctx: Context): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new Request(`${ctx.protocol}://${ctx.host}${ctx.originalUrl}`, {
    method: ctx.method,
    headers,
    body: Readable.toWeb(ctx.req) as ReadableStream<Uint8Array>,
    duplex: 'half',
  } as RequestInit);
}
