import type { ReadModelVersions } from '../../projection-engine/read-model-versions.ts';
import { VersionedCache } from '../../read-models/versioned-cache.ts';
import type { EntryViewDoc, PublicFormSetDoc } from '../../../projections/public-content.ts';
import { PUBLIC_CONTENT, type PublicContentQueries } from '../../../projections/public-content-queries.ts';
import { notFound, validationError } from '../errors/error-factory.ts';
import type { PublicProject } from './public-context.ts';
import type { QueryParams } from './query-params.ts';
import type { Doc } from '../../read-models/read-model-store.ts';


/** The requested locale (query parameter `locale`), checked against the project's content locales; the default locale when absent. */
export function requestedLocale(params: QueryParams, target: PublicProject): string {
  const { locales, defaultLocale } = target.project.contentLocales;
  const locale = params.string('locale', { maxLength: 35 });
  if (locale === undefined) return defaultLocale;
  const match = locales.find((l) => l.toLowerCase() === locale.toLowerCase());
  if (match === undefined) {
    throw validationError(`locale: ${JSON.stringify(locale)} is not a content locale of this project.`, { hint: `Use one of: ${locales.join(', ')}.` });
  }
  return match;
}

/** Form sets by slug, cached while the public-content read model does not change. */
export class FormSetLookup {
  readonly #cache: VersionedCache<Doc<PublicFormSetDoc> | null>;

  constructor(
    private readonly publicContent: PublicContentQueries,
    versions: ReadModelVersions,
  ) {
    this.#cache = new VersionedCache(() => versions.of(PUBLIC_CONTENT));
  }

  /** The project's form set with this slug; 404 NOT_FOUND when there is none. */
  async bySlug(projectId: string, slug: string): Promise<Doc<PublicFormSetDoc>> {
    const formSet = await this.#cache.get(`${projectId}\n${slug}`, async () => {
      const [found] = await this.publicContent.formSetWithSlug(projectId, slug);
      return found ?? null;
    });
    if (!formSet) throw notFound(`No form set with slug ${JSON.stringify(slug.slice(0, 200))}.`);
    return formSet;
  }
}

export type EntryLookup = { kind: 'found'; view: Doc<EntryViewDoc> } | { kind: 'moved'; slug: string } | { kind: 'missing' };

/**
 * A live entry of the form set by slug, in a locale (only `fields` of its view when given, see Query.fields); or, when the slug is a former slug of a live entry,
 * the entry's current slug (the caller answers 301), however many renames ago it was.
 */
export async function entryBySlug(publicContent: PublicContentQueries, formSetId: string, slug: string, locale: string, fields?: readonly string[]): Promise<EntryLookup> {
  const view = await liveEntryView(publicContent, formSetId, slug, locale, fields);
  return view ? { kind: 'found', view } : formerSlug(publicContent, formSetId, slug, locale);
}

/** The view of the live entry of the form set that has this slug now, in a locale (only `fields` of it when given); one index lookup. */
export async function liveEntryView(publicContent: PublicContentQueries, formSetId: string, slug: string, locale: string, fields?: readonly string[]): Promise<Doc<EntryViewDoc> | undefined> {
  const [view] = await publicContent.entryViewWithSlug(formSetId, slug, locale, fields);
  return view;
}

/**
 * Where a slug that no live entry has now leads: the current slug of the live entry that had it, however many
 * renames ago (the caller answers 301), or missing.
 */
export async function formerSlug(publicContent: PublicContentQueries, formSetId: string, slug: string, locale: string): Promise<Exclude<EntryLookup, { kind: 'found' }>> {
  const redirect = await publicContent.slugRedirect(formSetId, slug);
  if (!redirect) return { kind: 'missing' };
  const entry = await publicContent.entry(redirect.entryId);
  if (!entry || entry.live === null || entry.slug === slug) return { kind: 'missing' };
  // Only point at a URL that answers: the entry must still be live in this locale.
  const current = await publicContent.entryView(entry.entryId, locale);
  return current ? { kind: 'moved', slug: current.slug } : { kind: 'missing' };
}

export function entryNotFound(formSetSlug: string, slug: string): Error {
  return notFound(`No published entry ${JSON.stringify(slug.slice(0, 200))} in form set ${JSON.stringify(formSetSlug.slice(0, 200))}.`);
}
