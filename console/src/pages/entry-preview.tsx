import { Link, useParams, useSearchParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { isSafeHref } from '@annals/rich-text';
import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { FieldValue } from '../components/field-value.tsx';
import { RichTextView } from '../components/rich-text-view.tsx';
import { useAsset } from '../fields/asset-fields.tsx';
import { useMasterOptions } from '../fields/choice-fields.tsx';
import { embedUrlOf } from '../fields/video-field.tsx';
import type { FieldDefinition } from '../api/shapes.ts';

/** GET /preview/revisions of the public API: the single-entry shape, with the revision's status. */
interface PreviewBody {
  entry: { id: string; slug: string };
  revision: { id: string; revision: number; updatedAt: string; status: string };
  data: Record<string, unknown>;
}

/**
 * The default preview of a revision, for a project whose site has no preview of its own: the entry as the site
 * would receive it, read from the public API's preview (so rich text has been through the same sanitising as
 * everything the public API serves), laid out as a page: the title, then each field by its type. Marked as a
 * draft preview throughout; every value is rendered as React elements, never as injected HTML.
 */
export function EntryPreview() {
  const { entryId = '', revisionId = '' } = useParams();
  const [search, setSearch] = useSearchParams();
  const { t, formatTime } = useI18n();
  const { api, projectId, project, path } = useProject();
  const locales = project.contentLocales.locales;
  const locale = locales.includes(search.get('locale') ?? '') ? search.get('locale')! : project.contentLocales.defaultLocale;
  const entry = useQuery({ queryKey: [projectId, 'entry', entryId], queryFn: () => api.GET('/entries/{entryId}', { params: { path: { entryId } } }) });
  const formSet = useQuery({ queryKey: [projectId, 'form-set', entry.data?.formSetId], queryFn: () => api.GET('/form-sets/{formSetId}', { params: { path: { formSetId: entry.data!.formSetId } } }), enabled: Boolean(entry.data) });
  const preview = useQuery({
    queryKey: [projectId, 'preview', revisionId, locale],
    queryFn: async () => {
      const { token } = await api.POST('/revisions/{revisionId}/preview-token', { params: { path: { revisionId } } });
      return publicPreview(projectId, token, locale);
    },
    // A token is valid 15 minutes: the page is read once, not kept fresh.
    staleTime: Infinity,
    retry: false,
  });
  const fields = formSet.data?.definition.fields ?? [];
  const body = preview.data;
  // The field the form set names as its title (widgetRoles.title), else one keyed `title`.
  const titleKey = formSet.data?.definition.widgetRoles?.title ?? fields.find((f) => f.key === 'title')?.key;
  const title = titleKey && typeof body?.data[titleKey] === 'string' ? (body.data[titleKey] as string) : (body?.entry.slug ?? '');
  const shown = fields.filter((f) => f.key !== titleKey && isPresent(body?.data[f.key]));
  return (
    <article className="draft-preview" aria-labelledby="preview-title">
      <div className="draft-banner" role="note" aria-label={t('preview.banner')}>
        <strong>{t('preview.banner')}</strong>
        {body && <span>{t('preview.meta', { revision: body.revision.revision, status: statusName(t, body.revision.status), time: formatTime(body.revision.updatedAt) })}</span>}
        <span>{t('preview.private')}</span>
      </div>
      <p className="row">
        <Link to={path(`entries/${entryId}`)}>← {t('preview.back')}</Link>
        {locales.length > 1 && (
          <label className="inline">
            {t('preview.locale')}{' '}
            <select value={locale} onChange={(e) => setSearch({ locale: e.target.value }, { replace: true })}>
              {locales.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          </label>
        )}
      </p>
      <ErrorMessage error={preview.error ?? entry.error ?? formSet.error} />
      {body && formSet.data && (
        <div lang={locale}>
          <h1 id="preview-title">{title}</h1>
          {shown.length === 0 && <p className="muted">{t('preview.empty')}</p>}
          {shown.map((field) => (
            <section key={field.key} className="draft-field" aria-labelledby={`preview-${field.key}`}>
              <h2 id={`preview-${field.key}`}>{field.label}</h2>
              <PreviewValue field={field} value={body.data[field.key]} />
            </section>
          ))}
        </div>
      )}
    </article>
  );
}

async function publicPreview(projectId: string, token: string, locale: string): Promise<PreviewBody> {
  const request = `/public/p/${encodeURIComponent(projectId)}/v1/preview/revisions?${new URLSearchParams({ token, locale }).toString()}`;
  const response = await fetch(request, { credentials: 'omit', headers: { accept: 'application/json' } });
  const body = (await response.json().catch(() => null)) as (PreviewBody & { error?: { code: string; message: string; hint?: string } }) | null;
  if (!response.ok || !body) {
    const error = body?.error;
    throw new ApiError({ status: response.status, code: error?.code ?? 'INTERNAL', message: error?.message ?? response.statusText, hint: error?.hint, request: 'GET /preview/revisions' });
  }
  return body;
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '' && !(Array.isArray(value) && value.length === 0);
}

function statusName(t: ReturnType<typeof useI18n>['t'], status: string): string {
  const key = `status.${status}` as Parameters<typeof t>[0];
  return t(key);
}

/** One value as a page shows it: images as images, dates in the UI language, rich text rendered. */
function PreviewValue({ field, value }: { field: FieldDefinition; value: unknown }) {
  const { t } = useI18n();
  switch (field.type) {
    case 'tiptap':
      return <RichTextView doc={value} />;
    case 'textarea':
      return <p className="preview-text">{String(value)}</p>;
    case 'image':
      return typeof value === 'string' ? <PreviewImage assetId={value} /> : null;
    case 'image_gallery':
      return (
        <div className="preview-gallery">
          {(value as Array<string | { assetId: string; caption?: string }>).map((item, i) => {
            const assetId = typeof item === 'string' ? item : item.assetId;
            return <PreviewImage key={`${assetId}-${i}`} assetId={assetId} caption={typeof item === 'object' ? item.caption : undefined} />;
          })}
        </div>
      );
    case 'date':
      return <PreviewDate value={value} />;
    case 'boolean':
      return <p>{value === true ? t('field.yes') : t('preview.no')}</p>;
    case 'url':
      return typeof value === 'string' && isSafeHref(value) ? (
        <p>
          <a href={value} rel="noopener noreferrer nofollow" target="_blank">
            {value}
          </a>
        </p>
      ) : (
        <p>{String(value)}</p>
      );
    case 'video_embed': {
      const embed = typeof value === 'string' ? embedUrlOf(value) : undefined;
      return embed ? <iframe className="video-preview" src={embed} title={field.label} sandbox="allow-scripts allow-same-origin allow-presentation" referrerPolicy="no-referrer" /> : <p>{String(value)}</p>;
    }
    case 'select':
    case 'radio':
    case 'multiselect':
      return <PreviewChoice field={field} value={value} />;
    default:
      return (
        <p>
          <FieldValue field={field} value={value} />
        </p>
      );
  }
}

function PreviewImage({ assetId, caption }: { assetId: string; caption?: string | undefined }) {
  const asset = useAsset(assetId);
  if (!asset.data) return null;
  return (
    <figure className="preview-image">
      {asset.data.kind === 'image' ? <img src={asset.data.url} alt={asset.data.altText ?? ''} /> : <a href={asset.data.url}>{asset.data.fileName}</a>}
      {caption && <figcaption>{caption}</figcaption>}
    </figure>
  );
}

/** A date field: one day (YYYY-MM-DD) or a range {from, to}, as calendar days in the UI language. */
function PreviewDate({ value }: { value: unknown }) {
  const { language } = useI18n();
  const day = (iso: string) => {
    const at = new Date(`${iso}T00:00:00Z`);
    return Number.isNaN(at.getTime()) ? iso : new Intl.DateTimeFormat(language, { dateStyle: 'long', timeZone: 'UTC' }).format(at);
  };
  if (typeof value === 'string') return <p>{day(value)}</p>;
  const range = value as { from?: string; to?: string };
  if (typeof range.from !== 'string') return <p>{JSON.stringify(value)}</p>;
  return <p>{typeof range.to === 'string' && range.to !== range.from ? `${day(range.from)} – ${day(range.to)}` : day(range.from)}</p>;
}

/** A choice by its label in the UI language (its stored value while the labels load, or when the master no longer has it). */
function PreviewChoice({ field, value }: { field: FieldDefinition; value: unknown }) {
  const options = useMasterOptions(field.masterEntityKey);
  const label = (v: string) => options.find((o) => o.value === v)?.label ?? v;
  return <p>{(Array.isArray(value) ? value : [value]).map((v) => label(String(v))).join(', ')}</p>;
}
