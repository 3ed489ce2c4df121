import { mediaUrls, type EntryView } from './entry-view.ts';

/**
 * An entry view's public JSON, serialised once at projection time: a request for the entry writes these bytes
 * with only its mediaUrls (which name the request's base) filled in, and a list page joins the items of its
 * entries. Byte for byte what JSON.stringify makes of the response objects (singleEntryBody, listItem).
 */
// A type, not an interface, so that a StoredEntryView is a read-model document as it is (no copy to write it).
export type SerialisedEntry = {
  /** The single-entry response up to the value of mediaUrls: `{"formSet":…,"entry":…,"revision":…,"data":…,"mediaUrls":`. */
  jsonHead: string;
  /** The rest after mediaUrls: `,"widgetRoles":{…}}`. */
  jsonTail: string;
  /** The entry's item on a list page without include_snapshot. */
  jsonItem: string;
};

/**
 * The single-entry shape of spec section 4.1 (also by-path, by-slug, by-external-id and preview), its media URLs on
 * `baseUrl` (a request's PublicProject.mediaBaseUrl).
 */
export function singleEntryBody(view: EntryView, baseUrl: string): Record<string, unknown> {
  return {
    formSet: view.formSet,
    entry: { id: view.entryId, slug: view.slug },
    revision: view.revision,
    data: view.data,
    mediaUrls: mediaUrls(view.media, baseUrl),
    widgetRoles: view.widgetRoles,
  };
}

/** An entry on a list page; with the snapshot (include_snapshot) its data and mediaUrls too. */
export function listItem(view: Pick<EntryView, 'entryId' | 'slug' | 'revision'> & Partial<Pick<EntryView, 'data' | 'media'>>, snapshot?: { baseUrl: string }): Record<string, unknown> {
  return {
    entry: { id: view.entryId, slug: view.slug },
    published: {
      revisionId: view.revision.id,
      revision: view.revision.revision,
      updatedAt: view.revision.updatedAt,
      ...(snapshot ? { snapshot: view.data, mediaUrls: mediaUrls(view.media ?? {}, snapshot.baseUrl) } : {}),
    },
  };
}

export function serialiseEntry(view: Pick<EntryView, 'formSet' | 'entryId' | 'slug' | 'revision' | 'data' | 'widgetRoles'>): SerialisedEntry {
  const head = JSON.stringify({ formSet: view.formSet, entry: { id: view.entryId, slug: view.slug }, revision: view.revision, data: view.data });
  return {
    jsonHead: `${head.slice(0, -1)},"mediaUrls":`,
    jsonTail: `,"widgetRoles":${JSON.stringify(view.widgetRoles)}}`,
    jsonItem: JSON.stringify(listItem(view)),
  };
}

/** What an entry view's serialised JSON holds already, so a stored view does not keep it twice. */
type SerialisedParts = 'formSet' | 'revision' | 'data' | 'widgetRoles';
/** What a stored view leaves out because it is made again from the rest when asked for (seoValuesOf, version 13). */
type DerivedParts = 'seo';

/**
 * An entry view as public-content stores it (version 5): its serialised parts first (SQLite walks a stored
 * document's keys in order to find one, and public reads take these), then what reads filter, sort and shape
 * SEO documents by. The form set, revision, data and widget roles are in jsonHead and jsonTail only: kept
 * apart as well, they made the views' table a third larger (54.7 against 41.0 MB at 10,000 entries). Version 13:
 * the SEO values are not stored either (0.3 KB a view: the description repeated the text); the JSON-LD and Open
 * Graph documents make them from the data when asked for (seoValuesOf).
 */
export type StoredEntryView = Omit<EntryView, SerialisedParts | DerivedParts> & SerialisedEntry;

export function storedEntryView(view: EntryView): StoredEntryView {
  const { formSet: _formSet, revision: _revision, data: _data, widgetRoles: _widgetRoles, seo: _seo, entryId, media, ...rest } = view;
  const { jsonItem, jsonHead, jsonTail } = serialiseEntry(view);
  return { jsonItem, jsonHead, jsonTail, entryId, media, ...rest };
}

/**
 * The whole view of a stored one, its form set, revision, data and widget roles read back from its serialised
 * JSON (for reads that shape a response of their own, such as a form set's primary entry). A document that
 * earlier versions wrote holds them as they are. Without the SEO values (seoValuesOf makes them).
 */
export function entryViewOf(doc: StoredEntryView | EntryView): Omit<EntryView, DerivedParts> {
  if ('data' in doc && doc.data !== undefined) return doc as EntryView;
  const stored = doc as StoredEntryView;
  const head = JSON.parse(`${stored.jsonHead}null}`) as Pick<EntryView, 'formSet' | 'revision' | 'data'>;
  const tail = JSON.parse(`{${stored.jsonTail.slice(1)}`) as Pick<EntryView, 'widgetRoles'>;
  return { ...stored, formSet: head.formSet, revision: head.revision, data: head.data, widgetRoles: tail.widgetRoles };
}

/** The single-entry response's bytes on the request's base, from the serialised parts. */
export function singleEntryJson(serialised: Pick<SerialisedEntry, 'jsonHead' | 'jsonTail'>, media: EntryView['media'], baseUrl: string): string {
  return `${serialised.jsonHead}${JSON.stringify(mediaUrls(media, baseUrl))}${serialised.jsonTail}`;
}

/** `,"mediaUrls":`, how jsonHead ends. */
const HEAD_END = ',"mediaUrls":';
/** The key of the data in jsonHead. No value before it can hold these bytes: formSet, entry and revision have no key `data`, and a string holds a quote only escaped. */
const DATA_KEY = ',"data":';

/**
 * An entry's item on a list page with include_snapshot, from its serialised parts: the item with the data
 * that jsonHead holds and the media URLs on the request's base, byte for byte what JSON.stringify makes of
 * listItem(view, { baseUrl }), without parsing anything.
 */
export function snapshotItemJson(serialised: Pick<SerialisedEntry, 'jsonItem' | 'jsonHead'>, media: EntryView['media'], baseUrl: string): string {
  const { jsonItem, jsonHead } = serialised;
  const data = jsonHead.slice(jsonHead.indexOf(DATA_KEY) + DATA_KEY.length, jsonHead.length - HEAD_END.length);
  return `${jsonItem.slice(0, -2)},"snapshot":${data},"mediaUrls":${JSON.stringify(mediaUrls(media, baseUrl))}}}`;
}

/** A list page's bytes: its form set (as JSON), counts and the items' JSON joined. */
export function entryListJson(formSetJson: string, total: number, limit: number, offset: number, items: readonly string[]): string {
  return `{"formSet":${formSetJson},"total":${total},"limit":${limit},"offset":${offset},"items":[${items.join(',')}]}`;
}
