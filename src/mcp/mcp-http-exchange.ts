import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { sharedHelpCorpus } from '../help/load-help-corpus.ts';
import type { HelpCorpus } from '../help/help-corpus.ts';
import { AdminApiClient, type AdminSender } from './admin-api-client.ts';
import { createAnnalsMcpServer } from './annals-mcp-server.ts';

/** One MCP request over Streamable HTTP, as mcp-http-route.ts hands it over. */
export interface McpExchange {
  /** The caller's agent key: each tool calls the admin API with it. */
  agentKey: string;
  /** The service's URL as the agent called it. */
  serviceUrl: string;
  /**
   * How the tools' admin calls reach the service: back to the socket the request arrived on (loopback-sender.ts),
   * made by the route, so that the internal-call token it carries is the one the service checks.
   */
  send: AdminSender;
  maxRequestBodySize: number;
  help?: HelpCorpus | undefined;
  request: Request;
}

/**
 * Answers one stateless MCP request: a tool server for this caller, connected to a transport that answers with
 * JSON, closed afterwards. Only web-standard objects, bytes and the sender cross in and out, so that this module (and
 * the MCP SDK under it) can be loaded on the first request (mcp-http-route.ts) without its caller sharing a
 * class or a module's state with it (a loader may give the two sides separate copies: tsx under mocha does).
 */
export async function answerMcpRequest(exchange: McpExchange): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const client = new AdminApiClient({
    adminBase: `${exchange.serviceUrl}/admin`,
    agentKey: exchange.agentKey,
    send: exchange.send,
  });
  const server = createAnnalsMcpServer({ api: client, help: exchange.help ?? sharedHelpCorpus(), transport: 'http', serviceUrl: exchange.serviceUrl });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: exchange.maxRequestBodySize });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(exchange.request);
    // Read whole before the server closes: the answer is JSON, never a stream.
    return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
  } finally {
    await server.close();
  }
}
