/**
 * What the rest of the service may ask of the publication history (./publication-history.ts), typed: no
 * collection names or casts outside the read-model layer. Every read goes through the ReadModelReader it is
 * given, so reads follow the active generation and its cache as any other.
 */
import type { ReadModelReader } from '../src/read-models/read-model-reader.ts';
import type { PublicationIntervalDoc, SlugRedirectIntervalDoc } from './publication-history.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';


export const PUBLICATION_HISTORY = 'publication-history';

/** The collections paged by keyset (keysetPage in src/application/keyset-page.ts). */
export const PUBLICATION_HISTORY_LISTS = {
  intervals: { projection: PUBLICATION_HISTORY, collection: 'intervals' },
} as const;

export function publicationHistoryQueries(reader: ReadModelReader) {
  return {
    /**
     * The interval in which an entry (by id) or the entry with a slug of a form set was live at the instant
     * (milliseconds since the epoch), or null. The latest one that began by then: intervals of one entry never
     * overlap, and a slug is held by one live entry at a time.
     */
    async liveInterval(where: { entryId: string } | { formSetId: string; slug: string }, atMs: number): Promise<Doc<PublicationIntervalDoc> | null> {
      const [found] = await reader.find<Doc<PublicationIntervalDoc>>(PUBLICATION_HISTORY, 'intervals', {
        filter: { ...where, fromMs: { $lte: atMs }, toMs: { $gt: atMs } },
        sort: [['fromMs', 'desc']],
        limit: 1,
      });
      return found ?? null;
    },
    /** Where a former slug of the form set led at the instant: the redirect then in force, or null. */
    async slugRedirectAt(formSetId: string, slug: string, atMs: number): Promise<Doc<SlugRedirectIntervalDoc> | null> {
      const [found] = await reader.find<Doc<SlugRedirectIntervalDoc>>(PUBLICATION_HISTORY, 'redirects', {
        filter: { formSetId, slug, fromMs: { $lte: atMs }, toMs: { $gt: atMs } },
        sort: [['fromMs', 'desc']],
        limit: 1,
      });
      return found ?? null;
    },
    /** Any interval of the form set, or null (which project a deleted form set was of). */
    async anyIntervalOfFormSet(formSetId: string): Promise<Doc<PublicationIntervalDoc> | null> {
      const [found] = await reader.find<Doc<PublicationIntervalDoc>>(PUBLICATION_HISTORY, 'intervals', { filter: { formSetId }, limit: 1 });
      return found ?? null;
    },
  };
}

export type PublicationHistoryQueries = ReturnType<typeof publicationHistoryQueries>;
