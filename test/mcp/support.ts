import path from 'node:path';
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { AdminFixture } from '../admin/support.ts';
import { entryArgs } from '../support/child-process.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const PASSWORD = 'correct horse battery staple';
/** A 2x1 PNG (red and blue pixels). */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAD0lEQVQImWP4z8DAwPAfAAcAAf/89wURAAAAAElFTkSuQmCC';

export interface ToolAnswer {
  isError: boolean;
  text: string;
  /** The text parsed as JSON (successful calls), or undefined. */
  json: any;
}

/** Calls a tool and returns its text; the SDK reports tool failures as isError, never as throws. */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: unknown };
  const text = result.content.map((c) => c.text).join('\n');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  // A success carries its answer twice: as structured content (which the client has checked against the
  // tool's outputSchema) and as JSON text, for clients that read text only.
  if (result.isError !== true) expect(result.structuredContent, `${name}: structured content`).to.deep.equal(json);
  return { isError: result.isError === true, text, json };
}

/** Calls a tool that must succeed, and returns its JSON answer. */
export async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const answer = await callTool(client, name, args);
  expect(answer.isError, `${name}: ${answer.text}`).to.equal(false);
  return answer.json;
}

/** Calls a tool that must fail, and returns the error text. */
export async function failure(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const answer = await callTool(client, name, args);
  expect(answer.isError, `${name} should fail: ${answer.text}`).to.equal(true);
  return answer.text;
}

/**
 * Spawns the stdio MCP server (through the package bin, or src/mcp/main.ts compiled, as child-process.ts runs entry points) and
 * connects the SDK's client to it. Only the given variables (and PATH/HOME) reach the process.
 */
export async function spawnStdioClient(env: Record<string, string>, options: { viaBin?: boolean } = {}): Promise<{ client: Client; stderr: () => string }> {
  const args = options.viaBin ? [path.join(ROOT, 'bin/annals-mcp.mjs')] : entryArgs('src/mcp/main.ts');
  const transport = new StdioClientTransport({ command: process.execPath, args, env, cwd: ROOT, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'annals-test', version: '1.0.0' });
  await client.connect(transport);
  // As strict clients do: with the tools listed, the SDK's client checks the structured content of every
  // call against the tool's outputSchema (ajv), so an answer with a field the schema lacks fails the call.
  await client.listTools();
  return { client, stderr: () => stderr };
}

/** A console session token for the fixture's tenant_admin. */
export async function adminSession(f: AdminFixture): Promise<string> {
  const login = await f.call('POST', '/auth/login', { body: { email: f.project.adminEmail, password: PASSWORD }, token: '' });
  expect(login.status, JSON.stringify(login.body)).to.equal(200);
  return login.body.token as string;
}

/** Issues an agent key of a scope with a console session (agent keys cannot issue keys). */
export async function issueAgentKey(f: AdminFixture, session: string, scope: 'full' | 'content' | 'schema'): Promise<string> {
  const issued = await f.call('POST', '/keys', { body: { type: 'agent', scope, name: `${scope} key` }, token: session, headers: { 'X-Project-Id': f.project.projectId } });
  expect(issued.status, JSON.stringify(issued.body)).to.equal(201);
  return issued.body.key as string;
}
