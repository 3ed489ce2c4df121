import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { Actor } from '../event-store/event-store.ts';
import type { OperatorPrincipal } from '../domain/access/caller.ts';
import type { Principal } from '../domain/principal.ts';
import { entryDecider, type EntryCommand } from '../domain/content/entry/entry-decider.ts';
import { entryStream } from '../domain/content/entry/entry-events.ts';
import { formSetDecider } from '../domain/content/form-set/form-set-decider.ts';
import { formSetStreamId } from '../domain/content/form-set/form-set-events.ts';
import { assertValidEntryFields } from '../domain/content/form-set/field-validation.ts';
import type { FormSetDefinition } from '../domain/content/form-set/form-set-definition.ts';
import { masterDecider } from '../domain/content/master/master-decider.ts';
import { masterStreamId } from '../domain/content/master/master-events.ts';
import { builtInTemplate } from '../domain/content/blueprint/built-in-templates.ts';
import { blueprintCommands, planBlueprint } from '../domain/content/blueprint/plan-blueprint.ts';
import { AccessService } from './access-service.ts';
import { contactFormDecider } from '../domain/contact-form/contact-form-decider.ts';
import { contactFormStream } from '../domain/contact-form/contact-form-events.ts';
import { parseContactFormSettings } from '../domain/contact-form/contact-form-settings.ts';
import { handleCommand } from './command-handler.ts';
import { Reservations } from './reservations.ts';
import { assetDecider } from '../domain/media/asset-decider.ts';
import { assetStreamId } from '../domain/media/media-events.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { demoImage, DEMO_IMAGE_HEIGHT, DEMO_IMAGE_WIDTH } from './demo-images.ts';

export interface DemoResult {
  projectId: string;
  agentKey: string;
  publicApiKey: string;
  adminEmail: string;
  adminPassword: string;
  formSets: string[];
  contactForms: string[];
  /** Media assets uploaded (the blog's Open Graph images). */
  mediaAssets: number;
  /** The service's base URL the others are made from. */
  serviceUrl: string;
  /** The project-pinned public API base. */
  publicBase: string;
  /** The admin/agent API base. */
  adminApi: string;
  /** The contact form's hosted page. */
  hostedContactPage: string;
  /** The project's sign-in page of the web console. */
  console: string;
  /** One published blog entry on the public API: data, mediaUrls with its Open Graph image. */
  sampleEntry: string;
  position: bigint;
}

export interface DemoOptions {
  /** Where the demo's images go (the service's blob store: DATA_DIR/media or S3). */
  blobs: BlobStore;
  /** The service's public base URL (scheme, host, port), without a trailing slash. */
  serviceUrl: string;
}

const LOCALES = { locales: ['en', 'ja'], defaultLocale: 'en' };

/** The demo's contact form: notification, reply-to, honeypot, an autoreply in both languages, a hosted page. */
const DEMO_CONTACT_FORM = {
  name: 'Contact us',
  slug: 'contact',
  notification_emails: ['team@demo.annals.example'],
  reply_to_field: 'email',
  fields: [
    { key: 'name', type: 'text', label: 'Name', required: true },
    { key: 'email', type: 'email', label: 'E-mail', required: true },
    { key: 'company', type: 'text', label: 'Company' },
    { key: 'inquiry_type', type: 'select', label: 'Inquiry type', options: [{ value: 'sales', label: 'Sales' }, { value: 'support', label: 'Support' }, { value: 'other', label: 'Other' }] },
    { key: 'message', type: 'textarea', label: 'Message', required: true, limits: { maxLength: 5000 } },
  ],
  autoreply_enabled: true,
  autoreply_to_field: 'email',
  autoreply_subject: { en: 'Thank you, {{name}}', ja: '{{name}} 様、お問い合わせありがとうございます' },
  autoreply_body: {
    en: 'Dear {{name}},\n\nthank you for your message. We will answer within two working days.',
    ja: '{{name}} 様\n\nお問い合わせありがとうございます。2営業日以内にご連絡いたします。',
  },
  email_signature: 'The annals demo team',
  hosted_page_enabled: true,
};

const TOPICS = [
  ['Event sourcing for editors', 'エディターのためのイベントソーシング'],
  ['Why every revision matters', 'すべてのリビジョンが大切な理由'],
  ['Scheduling posts across time zones', 'タイムゾーンをまたぐ予約投稿'],
  ['Writing good meta descriptions', '良いメタディスクリプションの書き方'],
  ['Rebuilding read models without downtime', 'ダウンタイムなしでリードモデルを再構築'],
  ['Signed webhooks in practice', '署名付きWebhookの実践'],
  ['A headless CMS for agents', 'エージェントのためのヘッドレスCMS'],
  ['Localising content in two languages', '二言語でのコンテンツのローカライズ'],
] as const;

/**
 * `annals demo`: a demo project on the Business plan with content locales en (default) and ja:
 * a published blog_category master and a `blog` form set with 24 published entries in both languages,
 * each with an Open Graph image (made here with sharp and uploaded as a media asset),
 * a `news` form set with an entry in every workflow status, and a `contact` form with a hosted page. Written through the same deciders,
 * reservations and event log as the API, so the read models are built from it like from any history.
 */
export async function seedDemo(log: EventLog, clock: Clock, operator: OperatorPrincipal, options: DemoOptions): Promise<DemoResult> {
  const suffix = randomBytes(3).toString('hex');
  const adminPassword = randomBytes(12).toString('base64url');
  const access = new AccessService({ log, clock });
  const project = await access.bootstrap(operator, {
    projectName: `Annals demo ${suffix}`,
    projectSlug: `demo-${suffix}`,
    plan: 'business',
    adminEmail: `admin+${suffix}@demo.annals.example`,
    adminPassword,
    contentLocales: LOCALES,
  });
  const admin: Principal = { kind: 'user', userId: project.userId, tenantId: project.tenantId, role: 'tenant_admin' };
  // A site URL and name, so that sitemaps, Open Graph URLs and llms.txt read like a real site's.
  await access.updateSiteSettings(admin, project.projectId, {
    siteUrl: `https://demo-${suffix}.annals.example`,
    siteName: 'Annals demo',
    description: 'A demo of annals: an event-sourced headless content backend, in English and Japanese.',
  });
  const actor: Actor = { type: 'operator', id: operator.operatorId };
  const reservations = new Reservations(log);
  const at = () => clock.now();

  // Masters (published, so public readers may resolve them) and form sets from the built-in templates.
  const formSets = new Map<string, FormSetDefinition>();
  const masterValues = new Map<string, Set<string>>();
  for (const template of ['blog', 'news']) {
    const plan = planBlueprint(builtInTemplate(template).blueprint, { formSetSlugs: [...formSets.values()].map((f) => f.slug), masterKeys: [...masterValues.keys()] });
    const commands = blueprintCommands(plan, { projectId: project.projectId, newId: randomUUID });
    for (const create of commands.masters) {
      await reservations.claim(`master-key:${project.projectId}`, create.key, create.masterId, actor, 'master key');
      await handleCommand(log, masterStreamId(create.masterId), masterDecider, create, { principal: admin, now: at().toISOString() }, { actor });
      await handleCommand(log, masterStreamId(create.masterId), masterDecider, { type: 'publish_master' }, { principal: admin, now: at().toISOString() }, { actor });
      masterValues.set(create.key, new Set(create.records.map((r) => r.value)));
    }
    for (const create of commands.formSets) {
      await reservations.claim(`form-set-slug:${project.projectId}`, create.definition.slug, create.definition.id, actor, 'form set slug');
      await handleCommand(log, formSetStreamId(create.definition.id), formSetDecider, create, { principal: admin }, { actor });
      formSets.set(create.definition.slug, create.definition);
    }
  }

  const blog = formSets.get('blog')!;
  const news = formSets.get('news')!;
  const context = () => ({ principal: admin, plan: 'business' as const, now: at() });
  const run = (entryId: string, command: EntryCommand) => handleCommand(log, entryStream(entryId), entryDecider, command, context(), { actor });
  const createEntry = async (definition: FormSetDefinition, slug: string, fields: Record<string, unknown>) => {
    const entryId = randomUUID();
    const revisionId = randomUUID();
    const snapshot = assertValidEntryFields({ ...definition, version: 1 }, LOCALES, fields, { masterValues: (key) => masterValues.get(key) });
    await reservations.claim(`entry-slug:${definition.id}`, slug, entryId, actor, 'slug');
    await run(entryId, { type: 'create', entryId, projectId: project.projectId, formSetId: definition.id, slug, initialRevision: { revisionId, snapshot } });
    return { entryId, revisionId };
  };

  // One Open Graph image per topic, stored like an upload: bytes first, then the event.
  const images: string[] = [];
  for (const [i, [en]] of TOPICS.entries()) {
    const bytes = await demoImage(i);
    const assetId = randomUUID();
    const blobKey = `${project.projectId}/${assetId}`;
    await options.blobs.put(blobKey, { bytes }, { contentType: 'image/jpeg' });
    await handleCommand(
      log,
      assetStreamId(assetId),
      assetDecider,
      {
        type: 'register_upload',
        assetId,
        projectId: project.projectId,
        fileName: `${slugify(en)}.jpg`,
        mimeType: 'image/jpeg',
        byteSize: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        width: DEMO_IMAGE_WIDTH,
        height: DEMO_IMAGE_HEIGHT,
        animated: false,
        altText: en,
        caption: '',
        blobKey,
        source: 'generated',
      },
      { principal: admin, now: at().toISOString() },
      { actor },
    );
    images.push(assetId);
  }

  const blogCategories = [...masterValues.get('blog_category')!];
  let sampleSlug = '';
  for (let i = 0; i < 24; i++) {
    const [en, ja] = TOPICS[i % TOPICS.length]!;
    const part = Math.floor(i / TOPICS.length) + 1;
    const slug = `${slugify(en)}-${part}`;
    sampleSlug ||= slug;
    const { entryId, revisionId } = await createEntry(blog, slug, {
      title: { en: `${en} (part ${part})`, ja: `${ja}（第${part}回）` },
      body: { en: richText(`${en}. Part ${part} of a series on running content from an event log.`), ja: richText(`${ja}。イベントログでコンテンツを運用する連載の第${part}回です。`) },
      meta_description: { en: `${en}: part ${part} of the annals demo series.`, ja: `${ja}：annalsデモ連載の第${part}回。` },
      og_image: images[i % images.length],
      published_date: new Date(Date.UTC(2026, 0, 1 + i * 7)).toISOString().slice(0, 10),
      category: blogCategories[i % blogCategories.length],
    });
    await run(entryId, { type: 'submitForReview', entryId, revisionId });
    await run(entryId, { type: 'approve', entryId, revisionId });
  }

  // One news entry in every workflow status.
  const newsCategory = [...masterValues.get('news_category')!][0];
  const newsEntry = (slug: string, title: string) =>
    createEntry(news, slug, { title: { en: title, ja: `${title}（日本語）` }, summary: { en: `${title}.` }, published_date: '2026-11-01', category: newsCategory });
  await newsEntry('draft-announcement', 'A draft announcement');
  const review = await newsEntry('awaiting-review', 'Awaiting review');
  await run(review.entryId, { type: 'submitForReview', entryId: review.entryId, revisionId: review.revisionId });
  const scheduled = await newsEntry('scheduled-release', 'A scheduled release');
  await run(scheduled.entryId, { type: 'submitForReview', entryId: scheduled.entryId, revisionId: scheduled.revisionId });
  await run(scheduled.entryId, { type: 'approve', entryId: scheduled.entryId, revisionId: scheduled.revisionId, publishAt: { at: new Date(at().getTime() + 7 * 86_400_000).toISOString() } });
  const rejected = await newsEntry('rejected-draft', 'A rejected draft');
  await run(rejected.entryId, { type: 'submitForReview', entryId: rejected.entryId, revisionId: rejected.revisionId });
  await run(rejected.entryId, { type: 'reject', entryId: rejected.entryId, revisionId: rejected.revisionId, reason: 'Needs a source for the figures.' });
  const updated = await newsEntry('updated-release', 'An updated release');
  await run(updated.entryId, { type: 'submitForReview', entryId: updated.entryId, revisionId: updated.revisionId });
  await run(updated.entryId, { type: 'approve', entryId: updated.entryId, revisionId: updated.revisionId });
  // A second published revision supersedes the first.
  const second = randomUUID();
  const snapshot = assertValidEntryFields({ ...news, version: 1 }, LOCALES, { title: { en: 'An updated release (v2)', ja: '更新されたリリース（第2版）' }, published_date: '2026-11-02', category: newsCategory }, { masterValues: (key) => masterValues.get(key) });
  await run(updated.entryId, { type: 'saveRevision', entryId: updated.entryId, revisionId: second, snapshot });
  await run(updated.entryId, { type: 'submitForReview', entryId: updated.entryId, revisionId: second });
  await run(updated.entryId, { type: 'approve', entryId: updated.entryId, revisionId: second });

  // A contact form with a hosted page, as a site's "contact us" would have.
  const contactFormId = randomUUID();
  const { chat_webhook_url: _noChat, ...contactSettings } = parseContactFormSettings(DEMO_CONTACT_FORM, { contentLocales: LOCALES });
  const createContact = { type: 'create_contact_form' as const, projectId: project.projectId, formId: contactFormId, settings: { ...contactSettings, chat_webhook: null } };
  await reservations.claim(`contact-form-slug:${project.projectId}`, contactSettings.slug, contactFormId, actor, 'contact form slug');
  const contact = await handleCommand(log, contactFormStream(contactFormId), contactFormDecider, createContact, { principal: admin }, { actor });

  return {
    projectId: project.projectId,
    agentKey: project.agentKey.key,
    publicApiKey: project.publicKey.key,
    adminEmail: project.adminEmail,
    adminPassword,
    formSets: [...formSets.keys()],
    contactForms: [contactSettings.slug],
    mediaAssets: images.length,
    serviceUrl: options.serviceUrl,
    publicBase: `${options.serviceUrl}/public/p/${project.projectId}/v1`,
    adminApi: `${options.serviceUrl}/admin/v1`,
    hostedContactPage: `${options.serviceUrl}/contact/${project.projectSlug}/${contactSettings.slug}`,
    console: `${options.serviceUrl}/console/p/${project.projectId}/`,
    sampleEntry: `${options.serviceUrl}/public/p/${project.projectId}/v1/form-sets/blog/entries/${sampleSlug}`,
    position: contact.position!,
  };
}

function slugify(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

function richText(text: string): Record<string, unknown> {
  return { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] };
}
