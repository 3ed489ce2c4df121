import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SPEC_TOOL_NAMES } from '../../src/mcp/annals-mcp-server.ts';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { adminSession, failure, issueAgentKey, ok, PNG_BASE64 } from './support.ts';

/** The same tools over MCP's Streamable HTTP transport at /admin/v1/mcp, authenticated with the agent key. */
describe('MCP over Streamable HTTP (/admin/v1/mcp)', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let session: string;
  let contentKey: string;
  const clients: Client[] = [];

  const connect = async (token: string): Promise<Client> => {
    const transport = new StreamableHTTPClientTransport(new URL(`${f.service.url}/admin/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    const client = new Client({ name: 'annals-http-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  before(async () => {
    f = await startAdminFixture();
    session = await adminSession(f);
    contentKey = await issueAgentKey(f, session, 'content');
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await f?.stop();
  });

  it('lists every tool of spec section 4.4 and runs a whole job, read back on the public API', async () => {
    const client = await connect(f.project.agentKey.key);
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const name of SPEC_TOOL_NAMES) expect(names, name).to.include(name);

    await ok(client, 'apply_builtin_form_template', { templateId: 'blog' });
    const asset = await ok(client, 'upload_media', { base64: `data:image/png;base64,${PNG_BASE64}`, fileName: 'pixel.png' });
    // URLs in answers name the host the agent called.
    expect(asset.url).to.equal(`${f.service.url}/public/p/${f.project.projectId}/v1/media/${asset.id}`);
    const created = await ok(client, 'create_entry', { formSetSlug: 'blog', slug: 'over-http', fields: { title: 'Over HTTP', body: '<p>Hello</p>', og_image: asset.id } });
    const { id, revision } = created.revision;
    await ok(client, 'submit_entry_for_review', { id, revision });
    expect((await ok(client, 'publish_revision', { id, revision })).status).to.equal('published');

    const info = await ok(client, 'get_public_api_info');
    expect(info.publicBaseUrl).to.equal(`${f.service.url}/public/p/${f.project.projectId}/v1`);
    const live = await fetch(`${info.publicBaseUrl}/form-sets/blog/entries/over-http`);
    expect(live.status).to.equal(200);
    const body = (await live.json()) as { data: Record<string, unknown>; mediaUrls: Record<string, string> };
    expect(body.data['title']).to.equal('Over HTTP');
    expect(body.mediaUrls['og_image']).to.equal(asset.url);

    // The help works without a service call; filePath would read the server's disk: refused.
    expect((await ok(client, 'search_admin_help', { query: 'publish_revision' })).results).to.not.be.empty;
    expect(await failure(client, 'upload_media', { filePath: '/etc/hostname' })).to.match(/^VALIDATION_ERROR: filePath is not available on the remote MCP endpoint/);
  });

  it('passes the service\'s errors on as tool errors: scope, session-only tools, bad arguments', async () => {
    const content = await connect(contentKey);
    const refused = await failure(content, 'apply_builtin_form_template', { templateId: 'faq' });
    expect(refused).to.match(/^FORBIDDEN \(HTTP 403\): A content-scope agent key/);
    const session = await failure(content, 'update_master_tree', { masterKey: 'blog_category', nodes: [{ value: 'x' }] });
    expect(session).to.match(/^FORBIDDEN: update_master_tree needs a console user session[\s\S]*remote MCP endpoint/);
    expect(await failure(content, 'publish_revision', { id: 'x' })).to.match(/Invalid arguments for tool publish_revision/);
  });

  it('authenticates with an agent key: none or an invalid one is 401, a console session 403, GET and DELETE 405', async () => {
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    const post = (headers: Record<string, string>) =>
      fetch(`${f.service.url}/admin/v1/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: initialize });
    const none = await post({});
    expect(none.status).to.equal(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).to.equal('UNAUTHORIZED');
    expect((await post({ authorization: 'Bearer sk-agent-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).status).to.equal(401);
    const asSession = await post({ authorization: `Bearer ${session}`, 'x-project-id': f.project.projectId });
    expect(asSession.status).to.equal(403);
    expect(((await asSession.json()) as { error: { message: string } }).error.message).to.match(/takes an agent key/);
    const good = await post({ authorization: `Bearer ${f.project.agentKey.key}` });
    expect(good.status).to.equal(200);
    expect(((await good.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).to.equal('annals');
    for (const method of ['GET', 'DELETE']) {
      const answer = await fetch(`${f.service.url}/admin/v1/mcp`, { method, headers: { authorization: `Bearer ${f.project.agentKey.key}`, accept: 'text/event-stream' } });
      expect(answer.status, method).to.equal(405);
      expect(answer.headers.get('allow')).to.equal('POST');
    }
    // Each MCP message counts once against the key's rate limit, however many admin calls its tool makes.
    const callListFormSets = (id: number) =>
      fetch(`${f.service.url}/admin/v1/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${f.project.agentKey.key}` },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_project_overview', arguments: {} } }),
      });
    const first = await callListFormSets(2);
    const second = await callListFormSets(3);
    expect(first.status).to.equal(200);
    expect(((await second.json()) as { result: { isError?: boolean } }).result.isError ?? false).to.equal(false);
    expect(Number(first.headers.get('x-ratelimit-remaining')) - Number(second.headers.get('x-ratelimit-remaining'))).to.equal(1);
    // The endpoint is in the OpenAPI document; GET and DELETE, which only ever answer 405, are said in its description.
    const openapi = (await (await fetch(`${f.service.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { description: string }>> };
    expect(Object.keys(openapi.paths['/mcp'] ?? {})).to.deep.equal(['post']);
    expect(openapi.paths['/mcp']!['post']!.description).to.match(/GET and DELETE answer 405/);
  });
});
