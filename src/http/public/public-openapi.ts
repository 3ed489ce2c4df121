import type { PublicRoutes } from './public-router.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, MAX_QUERY_LENGTH } from './entry-reads.ts';
import { ENTITY_TYPE_MAX, EXTERNAL_ID_MAX, IMPORT_PATH_MAX, SOURCE_TYPE_MAX } from '../../domain/content/entry/import-metadata.ts';

type Schema = Record<string, unknown>;
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => ({ description, content: { 'application/json': { schema: ref('Error') } } });
const query = (name: string, schema: Schema, description: string, required = false) => ({ name, in: 'query', required, schema, description });
const path = (name: string, description: string) => ({ name, in: 'path', required: true, schema: { type: 'string' }, description });

const locale = { $ref: '#/components/parameters/locale' };
const localeError = error('VALIDATION_ERROR: locale is not a content locale of the project.');
const common = { '304': { description: 'Not modified: the If-None-Match ETag still matches.' }, '404': error('Unknown project, form set, entry or master; a deleted entry.') };
const entryResponses = {
  '200': json(ref('SingleEntry'), 'The entry in the requested locale.'),
  '301': {
    description: 'The slug changed: Location names the current URL (the query string kept). Clients follow redirects.',
    headers: { Location: { schema: { type: 'string', format: 'uri' } } },
    content: { 'application/json': { schema: { type: 'object', required: ['moved'], properties: { moved: { type: 'string', format: 'uri', description: 'The current URL, as in Location.' } } } } },
  },
  '400': error('VALIDATION_ERROR naming the parameter (unknown locale, missing or too long value).'),
  ...common,
};

/** The document's tags, each operation's by the first segment of its path. */
const TAGS: Record<string, { name: string; description: string }> = {
  'form-sets': { name: 'Entries', description: 'Published entries of a form set, and their JSON-LD and Open Graph values.' },
  content: { name: 'Lookup', description: 'A published entry by import path, by slugs or by external identity.' },
  preview: { name: 'Preview', description: 'Any revision, with a preview token.' },
  'master-entities': { name: 'Masters', description: 'Master entities published to the site and their records.' },
  'contact-forms': { name: 'Contact forms', description: 'Contact form submission, the one public write.' },
  media: { name: 'Media', description: 'Media files.' },
  sitemaps: { name: 'SEO', description: 'Sitemaps and llms.txt.' },
  sync: { name: 'Sync', description: 'What a site applies to stay up to date: each entry\'s and published master\'s last change, in log order, since a cursor.' },
};
const tagOf = (path: string): string => (/\.(xml|txt)$/.test(path) ? TAGS['sitemaps']! : TAGS[path.split('/')[1]!]!).name;

/** The public API's OpenAPI 3.1 document (served at /public/v1/openapi.json). */
export function publicOpenApiDocument(): Schema {
  return finished({
    openapi: '3.1.0',
    info: {
      title: 'annals public read API',
      version: '1.0.0',
      description: [
        'Read-only access to published content (spec section 4.1). Only entries with a published revision are served.',
        'Two bases: `/public/p/{projectId}/v1` names the project; `/public/v1` resolves it from a public key (header `X-Service-Public-Api-Key`, `Authorization: Bearer`, or query parameter `api_key`) or from the Host header (a custom domain of the project). No project resolved: 404.',
        'Every response carries `Access-Control-Allow-Origin: *`. JSON, XML and text responses carry a strong ETag and answer 304 to a matching If-None-Match; `Cache-Control: public, no-cache` by default (PUBLIC_CACHE_MAX_AGE), so a publish shows at once.',
        'Errors use the envelope `{error: {code, message, hint?, retryable?}}`.',
        'Paths match case-sensitively, as written here. A path with empty segments (`//`), dot segments (`/./`, `/../`, also percent-encoded), encoded slashes or backslashes (`%2F`, `%5C`) or malformed percent escapes is refused with 400 VALIDATION_ERROR before routing.',
        'Under overload any request may be answered 503 SERVICE_UNAVAILABLE with `retryable: true` and `Retry-After`.',
      ].join('\n\n'),
      license: { name: 'UNLICENSED', identifier: 'LicenseRef-UNLICENSED' },
      contact: { name: 'annals maintainers' },
    },
    servers: [
      { url: '/public/p/{projectId}/v1', description: 'Project named by its id (UUID) in the path.', variables: { projectId: { default: '00000000-0000-4000-8000-000000000000' } } },
      { url: '/public/v1', description: 'Project resolved from a public key or the Host header.' },
    ],
    security: [{}, { publicKeyHeader: [] }, { publicKeyBearer: [] }, { publicKeyQuery: [] }],
    paths: {
      '/form-sets/{slug}': {
        get: {
          operationId: 'getFormSetPrimaryEntry',
          summary: 'A form set with its primary entry: slug main, else _legacy, else the oldest published entry',
          parameters: [path('slug', 'Form set slug'), locale],
          responses: { '200': json(ref('FormSetPrimaryEntry'), 'The form set and its primary entry.'), '400': error('Unknown locale.'), ...common },
        },
      },
      '/form-sets/{formSetSlug}/entries': {
        get: {
          operationId: 'listEntries',
          summary: 'Published entries of a form set, paged',
          description: `Paging: \`page\` (1-based) or \`offset\`; when both are sent, **offset wins** and page is ignored; the response's offset is the one applied. Offsets beyond ${MAX_OFFSET} are refused. Order: \`sort\`, else newest first by published_at, or by relevance when \`q\` is sent.`,
          parameters: [
            path('formSetSlug', 'Form set slug'),
            query('page', { type: 'integer', minimum: 1, default: 1 }, '1-based page; ignored when offset is sent.'),
            query('limit', { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT }, `Items per page, at most ${MAX_LIMIT}.`),
            query('offset', { type: 'integer', minimum: 0, maximum: MAX_OFFSET }, 'Items to skip; wins over page.'),
            locale,
            query('q', { type: 'string', maxLength: MAX_QUERY_LENGTH }, 'Full-text search over the text, textarea and rich-text values in the locale (words in Japanese and Chinese text are found too); every word must match; most relevant first unless sort is sent. Business plan or above, otherwise 403 PLAN_REQUIRED.'),
            query('sort', { type: 'string', pattern: '^[a-z][a-z0-9_]*:(asc|desc)$' }, '<key>:<asc|desc>. Keys: created_at, updated_at (when the live revision was published), published_at (when the entry first went live), published_date (the date-role field) and any scalar field of the form set (text, url, textarea, number, boolean, date, select, radio, video_embed, entry_ref). Entries without a value sort first ascending, last descending.'),
            query('include_snapshot', { type: 'boolean', default: false }, 'Add snapshot (the values in the locale) and mediaUrls to each item.'),
          ],
          responses: {
            '200': json(ref('EntryList'), 'One page of entries.'),
            '400': error('VALIDATION_ERROR naming the parameter: limit above 100, page below 1, malformed or unknown sort, unknown locale, q too long.'),
            '403': error('PLAN_REQUIRED: q below the Business plan.'),
            '503': error('SERVICE_UNAVAILABLE: q on a deployment whose read-model server has no text indexes (a MongoDB wire-compatible server such as FerretDB v1), or a data store unavailable for the moment (Retry-After).'),
            ...common,
          },
        },
      },
      '/form-sets/{formSetSlug}/entries/{entrySlug}': {
        get: { operationId: 'getEntry', summary: 'One published entry', parameters: [path('formSetSlug', 'Form set slug'), path('entrySlug', 'Entry slug (a former slug answers 301)'), locale], responses: entryResponses },
      },
      '/form-sets/{formSetSlug}/entries/{entrySlug}/schema.json': {
        get: {
          operationId: 'getEntryJsonLd',
          summary: 'schema.org Article JSON-LD of an entry, from the SEO role mapping or common field names',
          parameters: [path('formSetSlug', 'Form set slug'), path('entrySlug', 'Entry slug'), locale],
          responses: { '200': { description: 'schema.org JSON-LD, served as application/json (spec section 1); <, >, & and U+2028/U+2029 are written as \\u escapes, so the text can be pasted into a script tag as it is', content: { 'application/json': { schema: ref('ArticleJsonLd') } } }, '301': entryResponses['301'], '400': localeError, ...common },
        },
      },
      '/form-sets/{formSetSlug}/entries/{entrySlug}/ogp.json': {
        get: {
          operationId: 'getEntryOpenGraph',
          summary: 'Open Graph and Twitter card values of an entry',
          parameters: [path('formSetSlug', 'Form set slug'), path('entrySlug', 'Entry slug'), locale],
          responses: { '200': json(ref('OpenGraph'), 'Every key present; null when unknown. <, >, & and U+2028/U+2029 are written as \\u escapes, so the text can be pasted into HTML as it is.'), '301': entryResponses['301'], '400': localeError, ...common },
        },
      },
      '/content/by-path': {
        get: { operationId: 'getEntryByPath', summary: 'A published entry by its import path', parameters: [query('path', { type: 'string', maxLength: IMPORT_PATH_MAX }, 'The import path.', true), locale], responses: entryResponses },
      },
      '/content/by-slug': {
        get: {
          operationId: 'getEntryBySlug',
          summary: 'A published entry by form set slug and entry slug',
          parameters: [query('formSetSlug', { type: 'string', maxLength: 200 }, 'Form set slug.', true), query('slug', { type: 'string', maxLength: 200 }, 'Entry slug (a former slug answers 301).', true), locale],
          responses: entryResponses,
        },
      },
      '/content/by-external-id': {
        get: {
          operationId: 'getEntryByExternalId',
          summary: 'A published entry by its external identity',
          description: 'sourceType and entityType are optional: when sent they must match; when omitted any identity with the externalId matches (the oldest entry first).',
          parameters: [
            query('sourceType', { type: 'string', maxLength: SOURCE_TYPE_MAX }, 'External system name.'),
            query('entityType', { type: 'string', maxLength: ENTITY_TYPE_MAX }, 'Entity kind.'),
            query('externalId', { type: 'string', maxLength: EXTERNAL_ID_MAX }, 'External id.', true),
            locale,
          ],
          responses: entryResponses,
        },
      },
      '/preview/revisions': {
        get: {
          operationId: 'previewRevision',
          summary: 'Any revision (draft included) in the single-entry shape, with a preview token',
          description: 'The token comes from POST /admin/v1/revisions/{revisionId}/preview-token (console users), is valid 15 minutes and opens one revision of one project. Never cached.',
          security: [{}],
          parameters: [query('token', { type: 'string', maxLength: 4096 }, 'The preview token (JWT).', true), locale],
          responses: { '200': json(ref('SingleEntry'), 'The revision; revision.status is its workflow status.'), '400': error('token missing, or unknown locale.'), '401': error('UNAUTHORIZED: expired, tampered or another project\'s token.'), '404': error('The revision no longer exists.') },
        },
      },
      '/master-entities': {
        get: { operationId: 'listMasterEntities', summary: 'Master entities published to the site', parameters: [locale], responses: { '200': json(ref('MasterEntityList'), 'Published masters by key.'), '400': localeError, ...common } },
      },
      '/master-entities/{key}/records': {
        get: {
          operationId: 'listMasterRecords',
          summary: 'Records of a published master, labels in the requested locale (default locale, then any, as fallback)',
          parameters: [path('key', 'Master key'), locale],
          responses: { '200': json(ref('MasterRecordList'), 'Records in display order.'), '400': localeError, ...common },
        },
      },
      '/contact-forms/{slug}/submit': {
        post: {
          operationId: 'submitContactForm',
          summary: 'Submit a contact form (no authentication; the one public write)',
          description:
            'The body is a JSON object whose keys are the form\'s field keys (spec section 4.2); unknown keys are refused. A plain HTML form may post the same fields as `application/x-www-form-urlencoded` (numbers, ticks `on`, repeated names for multiselect are converted); when such a post asks for HTML (`Accept: text/html`, as a browser does), the answer is the hosted thank-you page, or an error page with the same status, instead of JSON. When the form\'s honeypot field is filled, the answer is the same success and nothing is kept or sent. The autoreply\'s language is the `locale` query parameter, else the body field `_locale`, else the project\'s default locale. Each client address may submit CONTACT_SUBMIT_RATE_LIMIT times a minute.',
          security: [{}, { publicKeyHeader: [] }, { publicKeyBearer: [] }, { publicKeyQuery: [] }],
          parameters: [path('slug', 'Contact form slug'), query('locale', { type: 'string' }, 'A content locale of the project, for the autoreply.')],
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: { type: 'object', additionalProperties: true, properties: { _locale: { type: 'string' } } } },
              'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }, properties: { _locale: { type: 'string' } } } },
            },
          },
          responses: {
            '200': {
              description: 'Received (a form post asking for HTML gets the thank-you page).',
              content: {
                'application/json': { schema: { type: 'object', required: ['ok', 'submissionId'], properties: { ok: { const: true }, submissionId: { type: 'string', format: 'uuid' } } } },
                'text/html': { schema: { type: 'string' } },
              },
            },
            '400': error('VALIDATION_ERROR naming each field and its problem (missing required field, wrong type or format, unknown key, too long).'),
            '404': error('Unknown contact form.'),
            '413': error('PAYLOAD_TOO_LARGE: the body is over CONTACT_SUBMIT_MAX_BYTES.'),
            '415': error('UNSUPPORTED_MEDIA_TYPE: send Content-Type: application/json, or application/x-www-form-urlencoded from an HTML form.'),
            '429': { ...error('RATE_LIMITED: too many submissions from this address; retry after Retry-After seconds.'), headers: { 'Retry-After': { schema: { type: 'integer' } } } },
          },
        },
      },
      '/media/{assetId}': {
        get: {
          operationId: 'getMedia',
          summary: 'The file of a media asset, streamed',
          description: 'Cache-Control: public, max-age=31536000, immutable; a strong ETag from the content hash (304 on If-None-Match); single byte ranges (206, 416); HEAD. With Accept: image/webp, raster images are served as WebP, and every image response carries Vary: Accept.',
          parameters: [path('assetId', 'Asset id (UUID)'), { name: 'Range', in: 'header', required: false, schema: { type: 'string' }, description: 'bytes=start-end (one range).' }],
          responses: {
            '200': { description: 'The bytes, with the asset\'s MIME type.', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
            '206': { description: 'The requested byte range.', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
            '304': common['304'],
            '404': error('Unknown, malformed or deleted asset id.'),
            '416': error('RANGE_NOT_SATISFIABLE.'),
          },
        },
      },
      '/sync': {
        get: {
          operationId: 'syncContent',
          summary: 'What changed since a cursor, in log order: each entry\'s last change (its public JSON, or its removal) and each published master\'s',
          description:
            'A site keeps the answer\'s `cursor` and asks with it next time; without one the feed starts from the beginning and pages through every published entry and master. While `hasMore` is true, ask again at once. An entry changed twice since the cursor appears once, at its last change; an entry already delivered that changes again is delivered again later, so nothing is skipped. Apply `entry` items (upsert by `id`; redirect `previousSlugs` to `slug`), remove `entry.removed` ones, and likewise for masters. The cursor is a log position: it stays valid across restarts and read-model rebuilds, not across a move of the log to another store.',
          parameters: [
            query('cursor', { type: 'string', maxLength: 200 }, 'The cursor of the previous answer; none to start from the beginning.'),
            query('limit', { type: 'integer', minimum: 1, maximum: 100, default: 50 }, 'Changes per page.'),
            query('form_set', { type: 'string', maxLength: 200 }, 'Only the entries of this form set (by slug; no masters).'),
            locale,
          ],
          responses: { '200': json(ref('SyncPage'), 'A page of changes, and the cursor to ask with next.'), '400': error('VALIDATION_ERROR: a cursor this feed did not make, a limit out of range, an unknown locale.'), '404': common['404'] },
        },
      },
      '/sync/events': {
        get: {
          operationId: 'syncContentEvents',
          summary: 'The sync feed as Server-Sent Events: what is there after the cursor, then each change as it is published',
          description:
            'Starts after `Last-Event-ID` (what an EventSource sends when it reconnects), else `cursor`, else from the beginning; sends what is there, then each change as the read model commits it. Each event: `event:` the item\'s type (entry, entry.removed, master, master.removed), `data:` the item as GET /sync gives it, `id:` the cursor after it. A comment line every SYNC_HEARTBEAT_MS keeps a quiet stream open. At most SYNC_STREAMS_PER_CLIENT streams per client address (429) and SYNC_STREAMS_MAX per instance (503); streams end when the instance shuts down (reconnect).',
          parameters: [
            query('cursor', { type: 'string', maxLength: 200 }, 'Where to start when Last-Event-ID is not sent.'),
            query('form_set', { type: 'string', maxLength: 200 }, 'Only the entries of this form set (by slug; no masters).'),
            locale,
            { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string', maxLength: 200 }, description: 'The id of the last event received: the stream resumes after it.' },
          ],
          responses: {
            '200': { description: 'An event stream (text/event-stream) that ends when the client closes it or the instance shuts down.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            '400': error('VALIDATION_ERROR: a cursor this feed did not make, an unknown locale.'),
            '404': common['404'],
          },
        },
      },
      '/sitemap.xml': { get: { operationId: 'getSitemap', summary: 'Sitemap (protocol 0.9) of every published entry of every listed form set; a sitemap index of /sitemap-{n}.xml parts beyond 50,000 URLs', responses: xml() } },
      '/sitemap-{part}.xml': { get: { operationId: 'getSitemapPart', summary: 'Part n of a sitemap too large for one file', parameters: [path('part', 'Part number, from 1')], responses: xml() } },
      '/form-sets/{slug}/sitemap.xml': { get: { operationId: 'getFormSetSitemap', summary: "Sitemap of one form set's published entries (an index beyond 50,000 URLs)", parameters: [path('slug', 'Form set slug')], responses: xml() } },
      '/form-sets/{slug}/sitemap-{part}.xml': { get: { operationId: 'getFormSetSitemapPart', summary: "Part n of a form set's sitemap", parameters: [path('slug', 'Form set slug'), path('part', 'Part number, from 1')], responses: xml() } },
      '/llms.txt': {
        get: {
          operationId: 'getLlmsTxt',
          summary: 'llms.txt: H1 site name, a blockquote summary, one H2 section per form set listing its published entries as links',
          responses: { '200': { description: 'Markdown', content: { 'text/markdown': { schema: { type: 'string' } } } }, '304': common['304'], '404': common['404'] },
        },
      },
    },
    components: {
      securitySchemes: {
        publicKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Service-Public-Api-Key', description: 'A public key (service_pub_...) resolving the project on /public/v1.' },
        publicKeyBearer: { type: 'http', scheme: 'bearer', description: 'The same public key as a bearer token.' },
        publicKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key', description: 'The same public key as a query parameter.' },
      },
      parameters: {
        locale: { name: 'locale', in: 'query', required: false, schema: { type: 'string' }, description: "A content locale of the project; values fall back to the default locale. Absent: the default locale. Unknown: 400." },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' }, hint: { type: 'string' }, retryable: { type: 'boolean' } } } },
        },
        FormSet: { type: 'object', required: ['id', 'slug', 'name'], properties: { id: { type: 'string', format: 'uuid' }, slug: { type: 'string' }, name: { type: 'string' }, description: { type: ['string', 'null'] } } },
        EntryRef: { type: 'object', required: ['id', 'slug'], properties: { id: { type: 'string', format: 'uuid' }, slug: { type: 'string' } } },
        Revision: { type: 'object', required: ['id', 'revision', 'updatedAt'], properties: { id: { type: 'string', format: 'uuid' }, revision: { type: 'integer' }, updatedAt: { type: 'string', format: 'date-time' }, status: { type: 'string', description: 'Preview only.' } } },
        Data: { type: 'object', additionalProperties: true, description: 'Field values by field key, in the requested locale (spec section 2).' },
        MediaUrls: { type: 'object', additionalProperties: { oneOf: [{ type: 'string', format: 'uri' }, { type: 'array', items: { type: 'string', format: 'uri' } }] }, description: 'image and file fields: the full media URL, which loads as it is (a browser sends no key): on the base of the request, except on /public/v1 with the project chosen by a public key, where it is on the project-pinned base /public/p/{projectId}/v1; image_gallery: a list.' },
        SingleEntry: {
          type: 'object',
          required: ['formSet', 'entry', 'revision', 'data', 'mediaUrls', 'widgetRoles'],
          properties: { formSet: ref('FormSet'), entry: ref('EntryRef'), revision: ref('Revision'), data: ref('Data'), mediaUrls: ref('MediaUrls'), widgetRoles: { type: 'object', additionalProperties: { enum: ['title', 'thumbnail', 'description', 'date', 'category'] } } },
        },
        FormSetPrimaryEntry: { type: 'object', required: ['formSet', 'entry', 'revision', 'data', 'mediaUrls'], properties: { formSet: ref('FormSet'), entry: ref('EntryRef'), revision: ref('Revision'), data: ref('Data'), mediaUrls: ref('MediaUrls') } },
        EntryList: {
          type: 'object',
          required: ['formSet', 'total', 'limit', 'offset', 'items'],
          properties: {
            formSet: ref('FormSet'),
            total: { type: 'integer' },
            limit: { type: 'integer' },
            offset: { type: 'integer' },
            items: {
              type: 'array',
              items: {
                type: 'object',
                required: ['entry', 'published'],
                properties: {
                  entry: ref('EntryRef'),
                  published: { type: 'object', required: ['revisionId', 'revision', 'updatedAt'], properties: { revisionId: { type: 'string', format: 'uuid' }, revision: { type: 'integer' }, updatedAt: { type: 'string', format: 'date-time' }, snapshot: ref('Data'), mediaUrls: ref('MediaUrls') } },
                },
              },
            },
          },
        },
        MasterEntity: { type: 'object', required: ['id', 'key', 'name', 'recordCount'], properties: { id: { type: 'string', format: 'uuid' }, key: { type: 'string' }, name: { type: 'string' }, recordCount: { type: 'integer' }, publishedAt: { type: ['string', 'null'], format: 'date-time' } } },
        MasterEntityList: { type: 'object', required: ['total', 'items'], properties: { total: { type: 'integer' }, items: { type: 'array', items: ref('MasterEntity') } } },
        MasterRecordList: {
          type: 'object',
          required: ['masterEntity', 'locale', 'total', 'items'],
          properties: {
            masterEntity: ref('MasterEntity'),
            locale: { type: 'string' },
            total: { type: 'integer' },
            items: { type: 'array', items: { type: 'object', required: ['value', 'label', 'parent'], properties: { value: { type: 'string' }, label: { type: 'string' }, parent: { type: ['string', 'null'] } } } },
          },
        },
        SyncPage: {
          type: 'object',
          required: ['items', 'cursor', 'hasMore'],
          properties: {
            items: { type: 'array', items: { oneOf: [ref('SyncEntry'), ref('SyncEntryRemoved'), ref('SyncMaster'), ref('SyncMasterRemoved')] } },
            cursor: { type: ['string', 'null'], description: 'Where this page ends: send it as `cursor` next time (null only for an empty feed asked from the beginning).' },
            hasMore: { type: 'boolean', description: 'The page is full: ask again with the cursor at once.' },
          },
        },
        SyncEntry: {
          type: 'object',
          required: ['type', 'id', 'formSet', 'slug', 'previousSlugs', 'entry'],
          properties: { type: { const: 'entry' }, id: { type: 'string', format: 'uuid' }, formSet: { type: 'string' }, slug: { type: 'string' }, previousSlugs: { type: 'array', items: { type: 'string' } }, entry: ref('SingleEntry') },
        },
        SyncEntryRemoved: {
          type: 'object',
          required: ['type', 'id', 'formSet', 'slug', 'previousSlugs'],
          properties: { type: { const: 'entry.removed' }, id: { type: 'string', format: 'uuid' }, formSet: { type: ['string', 'null'] }, slug: { type: ['string', 'null'] }, previousSlugs: { type: 'array', items: { type: 'string' } } },
        },
        SyncMaster: { type: 'object', required: ['type', 'key', 'master'], properties: { type: { const: 'master' }, key: { type: 'string' }, master: ref('MasterRecordList') } },
        SyncMasterRemoved: { type: 'object', required: ['type', 'key'], properties: { type: { const: 'master.removed' }, key: { type: 'string' } } },
        OpenGraph: {
          type: 'object',
          required: ['og:title', 'og:description', 'og:image', 'og:url', 'og:type', 'og:site_name', 'twitter:card'],
          properties: Object.fromEntries(['og:title', 'og:description', 'og:image', 'og:url', 'og:type', 'og:site_name', 'twitter:card'].map((k) => [k, { type: ['string', 'null'] }])),
        },
        ArticleJsonLd: {
          type: 'object',
          required: ['@context', '@type', 'headline', 'datePublished', 'dateModified', 'author', 'publisher', 'mainEntityOfPage', 'url', 'inLanguage'],
          properties: {
            '@context': { const: 'https://schema.org' },
            '@type': { const: 'Article' },
            headline: { type: 'string' },
            description: { type: 'string' },
            image: { type: 'string', format: 'uri' },
            datePublished: { type: 'string' },
            dateModified: { type: 'string' },
            author: { type: 'object', required: ['@type', 'name'], properties: { '@type': { enum: ['Person', 'Organization'] }, name: { type: 'string' } } },
            publisher: {
              type: 'object',
              required: ['@type', 'name'],
              properties: {
                '@type': { const: 'Organization' },
                name: { type: 'string' },
                logo: { type: 'object', required: ['@type', 'url'], properties: { '@type': { const: 'ImageObject' }, url: { type: 'string', format: 'uri' } } },
              },
            },
            mainEntityOfPage: { type: 'string', format: 'uri', description: 'The entry\'s page: on the project\'s site when it has a site URL.' },
            url: { type: 'string', format: 'uri' },
            inLanguage: { type: 'string', description: 'The locale of the values.' },
          },
        },
      },
    },
  });
}

/**
 * Every operation tagged and described (its summary, when it has no longer description); every object
 * the API answers closed (`additionalProperties: false` where the document does not say otherwise), so a
 * field the service sends is one the document names.
 */
function finished(document: Schema): Schema {
  const paths = document['paths'] as Record<string, Record<string, Schema>>;
  for (const [path, methods] of Object.entries(paths)) {
    for (const operation of Object.values(methods)) {
      operation['tags'] = [tagOf(path)];
      operation['description'] ??= `${String(operation['summary'])}.`;
      // What any request may be answered before its route: the per-client limit and load shedding.
      const responses = operation['responses'] as Record<string, unknown>;
      responses['429'] ??= { ...error('RATE_LIMITED: too many requests in progress from this client at once (HTTP_MAX_CONNECTIONS_PER_CLIENT behind a proxy); retry after Retry-After seconds.'), headers: { 'Retry-After': { schema: { type: 'integer' } } } };
      responses['503'] ??= { ...error('SERVICE_UNAVAILABLE (retryable): the service is overloaded or shutting down; retry after Retry-After seconds.'), headers: { 'Retry-After': { schema: { type: 'integer' } } } };
      operation['responses'] = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  const close = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) close(item);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const schema = node as Schema;
    if (schema['type'] === 'object' && schema['properties'] && schema['additionalProperties'] === undefined) schema['additionalProperties'] = false;
    Object.values(schema).forEach(close);
  };
  close((document['components'] as Schema)['schemas']);
  close(paths);
  const tags = [...new Set(Object.values(TAGS))];
  return { ...document, tags };
}

function xml() {
  return {
    '200': { description: 'application/xml: a urlset, or a sitemapindex of numbered parts', content: { 'application/xml': { schema: { type: 'string' } } } },
    '304': common['304'],
    '404': error('Unknown project or form set, or no such part.'),
  };
}

/** GET /public/v1/openapi.json, without a project. */
export function publicOpenApiRoutes(): PublicRoutes {
  const document = publicOpenApiDocument();
  return (router) => {
    router.get('/openapi.json', (ctx) => {
      ctx.body = document;
    });
  };
}
