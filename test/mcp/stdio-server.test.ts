import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SPEC_TOOL_NAMES } from '../../src/mcp/annals-mcp-server.ts';
import { OPERATOR, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { tempDir } from '../support/temp-dir.ts';
import { compiledBuild } from '../support/compiled-build.ts';
import { startFakeDeepL, type FakeDeepL } from '../translation/fake-deepl.ts';
import { adminSession, callTool, failure, issueAgentKey, ok, PASSWORD, PNG_BASE64, spawnStdioClient } from './support.ts';

type FormatsPlugin = typeof addFormatsModule.default;
const addFormats: FormatsPlugin = (addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? (addFormatsModule as unknown as FormatsPlugin);

/**
 * The stdio MCP server as an agent runs it: spawned as a process (the package bin, which runs the compiled
 * build, or `node --import tsx src/mcp/main.ts`) against a service started here, driven by the official SDK
 * client. One service for the whole file; one server process per credential set. The help tools run through
 * the bin, so the compiled build is shown to find docs/help.
 */
describe('MCP stdio server', function () {
  this.timeout(60_000);
  let fake: FakeDeepL;
  let f: AdminFixture;
  let full: Client;
  let content: Client;
  let withSession: Client;
  let free: Client;
  let fullStderr: () => string;

  before(async () => {
    // The package bin runs the compiled build.
    compiledBuild();
    fake = await startFakeDeepL({ key: 'k-123' });
    // Business plan, content locales en (default) and ja; a translation provider on loopback.
    f = await startAdminFixture({ env: { TRANSLATION_API_URL: fake.url, TRANSLATION_API_KEY: 'k-123', OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    const session = await adminSession(f);
    const contentKey = await issueAgentKey(f, session, 'content');
    const freeProject = await f.access.bootstrap(OPERATOR, { projectName: 'Free site', plan: 'free', adminEmail: 'free@example.com', adminPassword: PASSWORD, contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' } });
    await f.service.supervisor!.waitFor(freeProject.position, 5000);
    const base = `${f.service.url}/admin`;
    const started = await Promise.all([
      spawnStdioClient({ ANNALS_ADMIN_BASE: base, ANNALS_AGENT_KEY: f.project.agentKey.key }, { viaBin: true }),
      spawnStdioClient({ ANNALS_ADMIN_BASE: base, ANNALS_AGENT_KEY: contentKey }),
      spawnStdioClient({ ANNALS_ADMIN_BASE: base, ANNALS_AGENT_KEY: f.project.agentKey.key, ANNALS_SESSION_TOKEN: session, ANNALS_PROJECT_ID: f.project.projectId }),
      spawnStdioClient({ ANNALS_ADMIN_BASE: base, ANNALS_AGENT_KEY: freeProject.agentKey.key }),
    ]);
    [full, content, withSession, free] = started.map((s) => s.client) as [Client, Client, Client, Client];
    fullStderr = started[0]!.stderr;
  });

  after(async () => {
    await Promise.all([full, content, withSession, free].map((c) => c?.close()));
    await f?.stop();
    await fake?.close();
  });

  it('lists every tool of spec section 4.4, each with an input schema and a description', async () => {
    const { tools } = await full.listTools();
    const names = tools.map((t) => t.name);
    for (const name of SPEC_TOOL_NAMES) expect(names, name).to.include(name);
    for (const extra of ['validate_form_blueprint', 'list_builtin_form_templates', 'list_contact_forms', 'get_contact_form', 'get_blueprint_schema']) expect(names).to.include(extra);
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).to.equal('object');
      expect(tool.description?.length ?? 0, tool.name).to.be.greaterThan(80);
    }
    const publish = tools.find((t) => t.name === 'publish_revision')!;
    expect(publish.inputSchema.required).to.have.members(['id', 'revision']);
    expect(Object.keys(tools.find((t) => t.name === 'upload_media')!.inputSchema.properties!)).to.include.members(['filePath', 'sourceUrl', 'base64']);
    expect(tools.find((t) => t.name === 'translate_entry_locales')!.description).to.match(/Standard plan/);
    expect(fullStderr()).to.match(/annals-mcp .*serving on stdio/);
  });

  it('declares an output schema for every tool: an object at its root, closed, that ajv compiles in strict mode', async () => {
    const { tools } = await full.listTools();
    const ajv = new Ajv({ strict: true, allErrors: true });
    addFormats(ajv);
    for (const tool of tools) {
      const output = tool.outputSchema as { type?: string; additionalProperties?: unknown } | undefined;
      expect(output?.type, `${tool.name}: outputSchema`).to.equal('object');
      // get_blueprint_schema answers a JSON Schema document: its head is described, the rest is the schema itself.
      if (tool.name !== 'get_blueprint_schema') expect(output!.additionalProperties, `${tool.name}: outputSchema is closed`).to.equal(false);
      for (const [which, schema] of [['input', tool.inputSchema], ['output', output]] as const) {
        const { $schema: _draft, ...rest } = schema as Record<string, unknown>;
        expect(() => ajv.compile(rest), `${tool.name} ${which}Schema`).to.not.throw();
      }
    }
    const entry = tools.find((t) => t.name === 'get_entry')!.outputSchema as { properties: Record<string, unknown>; required: string[] };
    expect(entry.required).to.include.members(['id', 'slug', 'latestRevision', 'links', 'values']);
  });

  it('runs a whole job through tools alone: template, media, entry, revision, review, publish, then the public API', async () => {
    const applied = await ok(full, 'apply_builtin_form_template', { templateId: 'blog' });
    expect(applied.formSets.map((s: { slug: string }) => s.slug)).to.deep.equal(['blog']);

    const schema = await ok(full, 'get_form_set_schema', { formSetSlug: 'blog' });
    const category = schema.fields.find((field: { key: string }) => field.key === 'category');
    expect(category.masterEntityKey).to.equal('blog_category');
    expect(category.sampleValues).to.be.an('array').that.is.not.empty;

    const asset = await ok(full, 'upload_media', { base64: PNG_BASE64, fileName: 'hero.png', altText: 'Hero' });
    expect(asset).to.include({ mimeType: 'image/png', width: 2, height: 1, fileName: 'hero.png' });

    const file = path.join(tempDir(), 'notes.txt');
    fs.writeFileSync(file, 'plain text attachment');
    const fromFile = await ok(full, 'upload_media', { filePath: file });
    expect(fromFile).to.include({ fileName: 'notes.txt', byteSize: 21 });

    const doc = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Written by an agent.' }] }] };
    const created = await ok(full, 'create_entry', {
      formSetSlug: 'blog',
      slug: 'agent-post',
      fields: { title: { en: 'Agent post' }, body: { en: doc }, og_image: asset.id, category: category.sampleValues[0], published_date: '2026-01-15' },
      idempotencyKey: 'agent-post-1',
    });
    expect(created.revision).to.include({ revision: 1, status: 'draft' });
    const entryId = created.entry.id;

    const saved = await ok(full, 'save_revision', { entryId, merge: true, fields: { meta_description: { en: 'A post written through MCP.' } } });
    expect(saved).to.include({ revision: 2, status: 'draft' });
    const entry = await ok(full, 'get_entry', { entryId });
    expect(entry.values.meta_description).to.deep.equal({ en: 'A post written through MCP.' });
    expect(entry.values.og_image).to.equal(asset.id);

    // Publishing a draft is refused with the hint to submit first.
    expect(await failure(full, 'publish_revision', { id: saved.id, revision: saved.revision })).to.match(/^CONFLICT \(HTTP 409\)[\s\S]*Hint: Submit it for review first/);

    const submitted = await ok(full, 'submit_entry_for_review', { id: saved.id, revision: saved.revision });
    expect(submitted.status).to.equal('pending_review');
    const published = await ok(full, 'publish_revision', { id: saved.id, revision: saved.revision });
    expect(published).to.include({ status: 'published', already_published: false });
    expect((await ok(full, 'publish_revision', { id: saved.id, revision: saved.revision })).already_published).to.equal(true);

    const info = await ok(full, 'get_public_api_info');
    expect(info.projectId).to.equal(f.project.projectId);
    expect(info.publicBaseUrl).to.equal(`${f.service.url}/public/p/${f.project.projectId}/v1`);
    const live = await fetch(`${info.publicBaseUrl}/form-sets/blog/entries/agent-post`);
    expect(live.status).to.equal(200);
    const page = (await live.json()) as { entry: { id: string }; revision: { id: string }; data: Record<string, unknown>; mediaUrls: Record<string, string> };
    expect(page.entry.id).to.equal(entryId);
    expect(page.revision.id).to.equal(saved.id);
    expect(page.data['title']).to.equal('Agent post');
    expect(page.data['meta_description']).to.equal('A post written through MCP.');
    expect(page.mediaUrls['og_image']).to.equal(`${info.publicBaseUrl}/media/${asset.id}`);
    expect((await fetch(page.mediaUrls['og_image']!)).headers.get('content-type')).to.equal('image/png');

    // Fill the Japanese values by machine translation: a new draft, then the same review and publish.
    const translated = await ok(full, 'translate_entry_locales', { entryId });
    expect(translated.translated).to.deep.include({ field: 'title', locale: 'ja' });
    expect(translated.revision).to.include({ revision: 3, status: 'draft' });
    await ok(full, 'submit_entry_for_review', { entryId });
    await ok(full, 'publish_revision', { id: translated.revision.id, revision: 3 });
    const ja = (await (await fetch(`${info.publicBaseUrl}/form-sets/blog/entries/agent-post?locale=ja`)).json()) as { data: Record<string, unknown> };
    expect(ja.data['title']).to.equal('[JA] Agent post');
    const revisions = await ok(full, 'list_revisions', { entryId });
    expect(revisions.items.map((r: { status: string }) => r.status)).to.deep.equal(['draft', 'superseded', 'published']);

    const renamed = await ok(full, 'update_entry', { entryId, slug: 'agent-post-renamed' });
    expect(renamed.slug).to.equal('agent-post-renamed');
    const listed = await ok(full, 'list_entries', { formSetSlug: 'blog' });
    expect(listed.items).to.have.length(1);
    expect(listed.nextCursor).to.equal(null);
  });

  it('rejects bad arguments with a clear message, and passes on the service\'s validation errors', async () => {
    expect(await failure(full, 'create_entry', { formSetSlug: 'blog', slug: 42 })).to.match(/Invalid arguments for tool create_entry[\s\S]*slug/);
    expect(await failure(full, 'get_entry', { entryId: 'not-an-id' })).to.match(/entryId|an entry id/);
    expect(await failure(full, 'upload_media', { fileName: 'x.png' })).to.match(/^VALIDATION_ERROR: Give exactly one of base64, sourceUrl and filePath/);
    const missing = await failure(full, 'create_entry', { formSetSlug: 'blog', slug: 'no-title', fields: {} });
    expect(missing).to.match(/^VALIDATION_ERROR \(HTTP 400\): .*fields\.title/);
    expect(missing).to.include('"code": "VALIDATION_ERROR"');
    expect(await failure(full, 'create_entry', { formSetSlug: 'nope', slug: 'x' })).to.match(/^NOT_FOUND: No form set with slug "nope"[\s\S]*Hint: The form sets are: blog/);
    expect(await failure(full, 'get_admin_help_article', { id: 'no-such-article' })).to.match(/^NOT_FOUND \(HTTP 404\)[\s\S]*getting-started/);
  });

  it('refuses blueprint application to a content-scope key with FORBIDDEN naming the scope', async () => {
    const blueprint = { formSets: [{ slug: 'notes', name: 'Notes', fields: [{ key: 'title', type: 'text', label: 'Title' }] }] };
    const refused = await failure(content, 'apply_form_blueprint', { blueprint });
    expect(refused).to.match(/^FORBIDDEN \(HTTP 403\): A content-scope agent key .*not apply blueprints or templates/);
    expect(refused).to.match(/Hint: .*scope full/);
    // The same key may read the schema and write entries.
    expect((await ok(content, 'list_form_sets')).items.map((s: { slug: string }) => s.slug)).to.include('blog');
    // A full key may validate and apply it.
    expect((await ok(full, 'validate_form_blueprint', { blueprint })).ok).to.equal(true);
    expect((await ok(full, 'apply_form_blueprint', { blueprint })).formSets[0].slug).to.equal('notes');
  });

  it('explains that master record updates need a user session, and does them with one', async () => {
    const refused = await failure(full, 'update_master_record', { masterKey: 'blog_category', value: 'news', labels: { en: 'News' } });
    expect(refused).to.match(/^FORBIDDEN: update_master_record needs a console user session: agent keys are refused/);
    expect(refused).to.match(/ANNALS_SESSION_TOKEN/);
    expect(await failure(full, 'patch_project_content_locales', { defaultLocale: 'en' })).to.match(/tenant_admin console session/);

    const created = await ok(full, 'create_master_record', { masterKey: 'blog_category', value: 'mcp-notes', labels: { en: 'MCP notes' } });
    expect(JSON.stringify(created)).to.include('mcp-notes');
    const updated = await ok(withSession, 'update_master_record', { masterKey: 'blog_category', value: 'mcp-notes', labels: { en: 'MCP notes', ja: 'MCP メモ' } });
    expect(updated.records.find((r: { value: string }) => r.value === 'mcp-notes').labels).to.deep.equal({ en: 'MCP notes', ja: 'MCP メモ' });
    const records = await ok(full, 'list_master_records', { masterKey: 'blog_category', locale: 'ja' });
    expect(records.items.find((r: { value: string }) => r.value === 'mcp-notes').label).to.equal('MCP メモ');
    expect(await ok(withSession, 'patch_project_content_locales', { defaultLocale: 'en' })).to.deep.equal({ locales: ['en', 'ja'], defaultLocale: 'en' });
  });

  it('says which plan a plan-gated tool needs on a Free project', async () => {
    const translation = await failure(free, 'translate_entry_locales', { entryId: '00000000-0000-4000-8000-000000000000' });
    expect(translation).to.match(/^PLAN_REQUIRED \(HTTP 403\): AI locale translation .*requires the Standard plan or above; this project is on Free/);
    expect(translation).to.match(/Hint: Upgrade the project to Standard or above/);
    const allowlist = await failure(free, 'add_login_ip_allowlist_entry', { cidr: '203.0.113.0/24' });
    expect(allowlist).to.match(/^PLAN_REQUIRED \(HTTP 403\): The console login IP allowlist requires the Business plan or above/);
  });

  it('answers from the admin help and manages the console login page and contact forms', async () => {
    const search = await ok(full, 'search_admin_help', { query: 'webhook signature' });
    expect(search.results[0].articleId).to.equal('webhooks');
    const asked = await ok(full, 'ask_admin_help', { question: 'お問い合わせフォームの自動返信' });
    expect(asked.articleIds[0]).to.equal('contact-forms');
    const article = await ok(full, 'get_admin_help_article', { id: 'mcp' });
    expect(article.markdown).to.match(/^# MCP tool server/);

    expect((await ok(full, 'update_login_appearance', { primaryColor: '#0055ff', message: 'Welcome' })).primaryColor).to.equal('#0055ff');
    const branding = await ok(full, 'get_login_branding');
    expect(branding).to.include({ projectId: f.project.projectId, primaryColor: '#0055ff', message: 'Welcome' });
    const entry = await ok(full, 'add_login_ip_allowlist_entry', { cidr: '203.0.113.0/24', label: 'Office' });
    expect((await ok(full, 'list_login_ip_allowlist')).items.map((e: { cidr: string }) => e.cidr)).to.deep.equal(['203.0.113.0/24']);
    expect(await ok(full, 'delete_login_ip_allowlist_entry', { entryId: entry.id })).to.deep.equal({ deleted: true, entryId: entry.id });

    const form = await ok(full, 'create_contact_form', {
      name: 'Contact',
      slug: 'contact',
      fields: [
        { key: 'email', type: 'email', label: 'E-mail', required: true },
        { key: 'message', type: 'textarea', label: 'Message', required: true },
      ],
      notification_emails: ['team@example.com'],
    });
    const changed = await ok(full, 'update_contact_form', { formId: form.id, autoreply_enabled: true, autoreply_to_field: 'email', autoreply_subject: 'Thanks', autoreply_body: 'We got your message.' });
    expect(changed).to.include({ autoreply_enabled: true, autoreply_to_field: 'email' });
    const call = await callTool(content, 'create_contact_form', { name: 'X', slug: 'x', fields: [{ key: 'a', type: 'text', label: 'A' }] });
    expect(call.isError).to.equal(true);
    expect(call.text).to.match(/^FORBIDDEN/);
  });
});
