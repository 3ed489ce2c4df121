import { notFound } from '../../domain-error.ts';

/**
 * Built-in form set templates (POST /admin/v1/form-set-templates/{id}/apply). Each is a form blueprint
 * document, valid against FORM_BLUEPRINT_SCHEMA, applied like any blueprint. Master labels are given in
 * English and Japanese; labels for locales a project does not use are simply never shown.
 */
export interface BuiltInTemplate {
  id: string;
  name: string;
  description: string;
  blueprint: TemplateBlueprint;
}

type Field = {
  key: string;
  type: string;
  label: string;
  description?: string;
  required?: boolean;
  locale_shared?: boolean;
  masterEntityKey?: string;
  limits?: Record<string, number | boolean | string>;
};
export interface TemplateBlueprint {
  name: string;
  description: string;
  formSets: Array<{
    slug: string;
    name: string;
    description: string | null;
    blocks: Array<{ id: string; label: string; fieldKeys: string[] }>;
    fields: Field[];
    seoRoles: Record<string, string>;
    widgetRoles: Record<string, string>;
  }>;
  masters: Array<{ key: string; name: string; records: Array<{ value: string; labels: Record<string, string>; order?: number; parent?: string | null }> }>;
}

const record = (value: string, en: string, ja: string) => ({ value, labels: { en, ja } });

const blog: BuiltInTemplate = {
  id: 'blog',
  name: 'Blog',
  description: 'Blog posts with rich-text body, SEO description, Open Graph image, publication date and a category.',
  blueprint: {
    name: 'Blog',
    description: 'A blog form set and its blog_category master.',
    formSets: [
      {
        slug: 'blog',
        name: 'Blog',
        description: 'Blog posts',
        blocks: [
          { id: 'content', label: 'Content', fieldKeys: ['title', 'body'] },
          { id: 'seo', label: 'SEO', fieldKeys: ['meta_description', 'og_image'] },
          { id: 'meta', label: 'Publication', fieldKeys: ['published_date', 'category'] },
        ],
        fields: [
          { key: 'title', type: 'text', label: 'Title', required: true, limits: { maxLength: 120 } },
          { key: 'body', type: 'tiptap', label: 'Body', required: true },
          { key: 'meta_description', type: 'textarea', label: 'Meta description', description: 'Shown by search engines; about 120 to 160 characters.', limits: { maxLength: 160 } },
          { key: 'og_image', type: 'image', label: 'OG image', description: 'Open Graph image, 1200x630 recommended.' },
          { key: 'published_date', type: 'date', label: 'Published date' },
          { key: 'category', type: 'select', label: 'Category', masterEntityKey: 'blog_category' },
        ],
        seoRoles: { title: 'title', description: 'meta_description', image: 'og_image', date: 'published_date' },
        widgetRoles: { title: 'title', thumbnail: 'og_image', description: 'meta_description', date: 'published_date', category: 'category' },
      },
    ],
    masters: [
      {
        key: 'blog_category',
        name: 'Blog category',
        records: [record('news', 'News', 'ニュース'), record('how-to', 'How-to', 'ハウツー'), record('case-study', 'Case study', '導入事例'), record('column', 'Column', 'コラム')],
      },
    ],
  },
};

const news: BuiltInTemplate = {
  id: 'news',
  name: 'News',
  description: 'News releases and announcements with a summary, a publication date, a thumbnail, a category and an optional external link.',
  blueprint: {
    name: 'News',
    description: 'A news form set and its news_category master.',
    formSets: [
      {
        slug: 'news',
        name: 'News',
        description: 'News releases and announcements',
        blocks: [
          { id: 'content', label: 'Content', fieldKeys: ['title', 'summary', 'body'] },
          { id: 'meta', label: 'Publication', fieldKeys: ['published_date', 'category', 'thumbnail', 'external_url'] },
        ],
        fields: [
          { key: 'title', type: 'text', label: 'Title', required: true, limits: { maxLength: 120 } },
          { key: 'summary', type: 'textarea', label: 'Summary', limits: { maxLength: 200 } },
          { key: 'body', type: 'tiptap', label: 'Body' },
          { key: 'published_date', type: 'date', label: 'Published date', required: true },
          { key: 'category', type: 'select', label: 'Category', masterEntityKey: 'news_category' },
          { key: 'thumbnail', type: 'image', label: 'Thumbnail' },
          { key: 'external_url', type: 'url', label: 'External link', description: 'When the news lives elsewhere, e.g. a press release on a wire service.' },
        ],
        seoRoles: { title: 'title', description: 'summary', image: 'thumbnail', date: 'published_date' },
        widgetRoles: { title: 'title', thumbnail: 'thumbnail', description: 'summary', date: 'published_date', category: 'category' },
      },
    ],
    masters: [
      {
        key: 'news_category',
        name: 'News category',
        records: [record('press', 'Press release', 'プレスリリース'), record('product', 'Product', '製品'), record('event', 'Event', 'イベント'), record('other', 'Other', 'その他')],
      },
    ],
  },
};

const faq: BuiltInTemplate = {
  id: 'faq',
  name: 'FAQ',
  description: 'Frequently asked questions: question, rich-text answer, category and sort order.',
  blueprint: {
    name: 'FAQ',
    description: 'An faq form set and its faq_category master.',
    formSets: [
      {
        slug: 'faq',
        name: 'FAQ',
        description: 'Frequently asked questions',
        blocks: [{ id: 'qa', label: 'Question and answer', fieldKeys: ['question', 'answer', 'category', 'sort_order'] }],
        fields: [
          { key: 'question', type: 'text', label: 'Question', required: true, limits: { maxLength: 200 } },
          { key: 'answer', type: 'tiptap', label: 'Answer', required: true },
          { key: 'category', type: 'select', label: 'Category', masterEntityKey: 'faq_category' },
          { key: 'sort_order', type: 'number', label: 'Sort order', description: 'Lower numbers first.', limits: { integer: true, min: 0 } },
        ],
        seoRoles: { title: 'question', description: 'answer' },
        widgetRoles: { title: 'question', description: 'answer', category: 'category' },
      },
    ],
    masters: [
      {
        key: 'faq_category',
        name: 'FAQ category',
        records: [record('general', 'General', '一般'), record('account', 'Account', 'アカウント'), record('billing', 'Billing', 'お支払い'), record('technical', 'Technical', '技術')],
      },
    ],
  },
};

const events: BuiltInTemplate = {
  id: 'events',
  name: 'Events',
  description: 'Events, seminars and webinars: dates (a day or a from/to range), venue, online and registration links, cover image and category.',
  blueprint: {
    name: 'Events',
    description: 'An events form set and its event_category master.',
    formSets: [
      {
        slug: 'events',
        name: 'Events',
        description: 'Events, seminars and webinars',
        blocks: [
          { id: 'content', label: 'Content', fieldKeys: ['title', 'summary', 'description', 'cover_image'] },
          { id: 'schedule', label: 'Schedule and place', fieldKeys: ['event_date', 'venue', 'online_url', 'registration_url', 'capacity', 'category'] },
        ],
        fields: [
          { key: 'title', type: 'text', label: 'Title', required: true, limits: { maxLength: 120 } },
          { key: 'summary', type: 'textarea', label: 'Summary', limits: { maxLength: 200 } },
          { key: 'description', type: 'tiptap', label: 'Description' },
          { key: 'cover_image', type: 'image', label: 'Cover image' },
          { key: 'event_date', type: 'date', label: 'Date', description: 'A date or date-time, or {from, to} for several days.', required: true },
          { key: 'venue', type: 'text', label: 'Venue', limits: { maxLength: 200 } },
          { key: 'online_url', type: 'url', label: 'Online event URL' },
          { key: 'registration_url', type: 'url', label: 'Registration URL' },
          { key: 'capacity', type: 'number', label: 'Capacity', limits: { integer: true, min: 0 } },
          { key: 'category', type: 'radio', label: 'Category', masterEntityKey: 'event_category' },
        ],
        seoRoles: { title: 'title', description: 'summary', image: 'cover_image', date: 'event_date' },
        widgetRoles: { title: 'title', thumbnail: 'cover_image', description: 'summary', date: 'event_date', category: 'category' },
      },
    ],
    masters: [
      {
        key: 'event_category',
        name: 'Event category',
        records: [record('seminar', 'Seminar', 'セミナー'), record('webinar', 'Webinar', 'ウェビナー'), record('workshop', 'Workshop', 'ワークショップ'), record('conference', 'Conference', 'カンファレンス')],
      },
    ],
  },
};

const products: BuiltInTemplate = {
  id: 'products',
  name: 'Products',
  description: 'A product catalogue: name, description, price, SKU, stock, images and gallery, video, spec sheet, category tree, tags and a related product.',
  blueprint: {
    name: 'Products',
    description: 'A products form set with its product_category (a tree) and product_tag masters.',
    formSets: [
      {
        slug: 'products',
        name: 'Products',
        description: 'Product catalogue',
        blocks: [
          { id: 'basics', label: 'Basics', fieldKeys: ['name', 'summary', 'description', 'category', 'tags'] },
          { id: 'commerce', label: 'Price and stock', fieldKeys: ['price', 'sku', 'in_stock'] },
          { id: 'media', label: 'Media', fieldKeys: ['main_image', 'gallery', 'video', 'spec_sheet'] },
          { id: 'links', label: 'Links', fieldKeys: ['related_product', 'release_date'] },
        ],
        fields: [
          { key: 'name', type: 'text', label: 'Product name', required: true, limits: { maxLength: 120 } },
          { key: 'summary', type: 'textarea', label: 'Summary', limits: { maxLength: 300 } },
          { key: 'description', type: 'tiptap', label: 'Description' },
          { key: 'category', type: 'select', label: 'Category', masterEntityKey: 'product_category' },
          { key: 'tags', type: 'multiselect', label: 'Tags', masterEntityKey: 'product_tag', limits: { maxItems: 10 } },
          { key: 'price', type: 'number', label: 'Price', limits: { min: 0 } },
          { key: 'sku', type: 'text', label: 'SKU', locale_shared: true, limits: { maxLength: 64, pattern: '^[A-Z0-9][A-Z0-9-]*$' } },
          { key: 'in_stock', type: 'boolean', label: 'In stock' },
          { key: 'main_image', type: 'image', label: 'Main image' },
          { key: 'gallery', type: 'image_gallery', label: 'Gallery', limits: { maxItems: 20 } },
          { key: 'video', type: 'video_embed', label: 'Product video' },
          { key: 'spec_sheet', type: 'file', label: 'Spec sheet (PDF)' },
          { key: 'related_product', type: 'entry_ref', label: 'Related product' },
          { key: 'release_date', type: 'date', label: 'Release date' },
        ],
        seoRoles: { title: 'name', description: 'summary', image: 'main_image', date: 'release_date' },
        widgetRoles: { title: 'name', thumbnail: 'main_image', description: 'summary', date: 'release_date', category: 'category' },
      },
    ],
    masters: [
      {
        key: 'product_category',
        name: 'Product category',
        records: [
          { ...record('hardware', 'Hardware', 'ハードウェア'), order: 0 },
          { ...record('laptops', 'Laptops', 'ノートパソコン'), order: 0, parent: 'hardware' },
          { ...record('accessories', 'Accessories', 'アクセサリー'), order: 1, parent: 'hardware' },
          { ...record('software', 'Software', 'ソフトウェア'), order: 1 },
          { ...record('services', 'Services', 'サービス'), order: 2 },
        ],
      },
      {
        key: 'product_tag',
        name: 'Product tag',
        records: [record('new', 'New', '新着'), record('sale', 'On sale', 'セール'), record('popular', 'Popular', '人気'), record('limited', 'Limited', '限定')],
      },
    ],
  },
};

export const BUILT_IN_TEMPLATES: readonly BuiltInTemplate[] = [blog, news, faq, events, products].map(deepFreeze);

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** The template with this id; NOT_FOUND naming the ids there are otherwise. */
export function builtInTemplate(id: string): BuiltInTemplate {
  const template = BUILT_IN_TEMPLATES.find((t) => t.id === id);
  if (!template) throw notFound(`No built-in form set template "${id}"; there are ${BUILT_IN_TEMPLATES.map((t) => t.id).join(', ')}.`);
  return template;
}

/** The templates as listed to clients: id, name, description and the form sets and masters each creates. */
export function listBuiltInTemplates(): Array<{ id: string; name: string; description: string; formSetSlugs: string[]; masterKeys: string[] }> {
  return BUILT_IN_TEMPLATES.map((t) => ({
    id: t.id,
    name: t.name,
    description: t.description,
    formSetSlugs: t.blueprint.formSets.map((f) => f.slug),
    masterKeys: t.blueprint.masters.map((m) => m.key),
  }));
}
