import type { ExternalIdentity, Snapshot } from '../src/domain/content/entry/entry-events.ts';
import type { MasterRecord } from '../src/domain/content/master/master-entity.ts';
import type { EntryView, SortSlot } from '../src/public-content/entry-view.ts';
import type { SerialisedEntry, StoredEntryView } from '../src/public-content/public-json.ts';
import type { FormSetDoc } from './content.ts';

/**
 * The documents of the public-content read model (projections/public-content.ts, whose comment says which
 * collection holds which) and the ids of those whose id is made of two parts.
 */

export interface PublicProjectDoc {
  projectId: string;
  locales: string[];
  defaultLocale: string;
}

/** What the admin read model keeps of a form set, less its version and times. */
export type PublicFormSetDoc = Pick<FormSetDoc, 'formSetId' | 'projectId' | 'slug' | 'name' | 'description' | 'definition'> & {
  /**
   * The fields whose sort values its entry views hold in a sort slot (sortSlotsOf; version 7): a list sorted by
   * one reads that slot's index. Absent on documents of earlier generations, whose views hold every sort value
   * in sortValues.
   */
  sortSlots?: Record<string, SortSlot>;
};

export interface PublicEntryDoc {
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  createdAt: string;
  importPath: string | null;
  external: ExternalIdentity | null;
  /** When a revision of the entry first went live; null while it never has. */
  firstPublishedAt: string | null;
  live: ({ revisionId: string; revision: number; updatedAt: string } & SnapshotRef) | null;
  /** Former slugs (each may have a redirect), oldest first. */
  previousSlugs: string[];
}

export type DraftDoc = {
  revisionId: string;
  entryId: string;
  revision: number;
} & SnapshotRef;

/**
 * Where a revision's snapshot is: the log position of its save (20 digits; version 15: no read model holds a copy
 * of the log), read with view.eventAt when a view is shaped; or, in a document an earlier version folded, the
 * snapshot itself.
 */
export type SnapshotRef = { savedAt: string; snapshot?: never } | { snapshot: Snapshot; savedAt?: never };

export interface SiteIndexDoc {
  projectId: string;
  formSetId: string;
  formSetSlug: string;
  entryId: string;
  slug: string;
  /** The entry's path(s) on the site: one per content locale when the URL pattern uses {locale}. */
  paths: Array<{ locale: string; path: string }>;
  /** Each path's `<url>` of a sitemap, serialised from the path onward (urlFragment; version 3). */
  urlXml?: string[];
  lastmod: string;
  changefreq: string;
  priority: number;
  /** In the default locale: what llms.txt lists. */
  title: string;
  description: string | null;
}

export interface SiteVersionDoc {
  scope: 'project' | 'form-set';
  /** Position of the last event that changed the site outputs of the project or form set. */
  version: string;
}

/**
 * A document of `live_counts`: what a form set's public entry list is made of besides its items. Version 11
 * added the change: every event that changes the list (an entry view of the form set written or removed, the
 * form set's name or description) also writes it here, so that a list page's ETag is made from it and the
 * request (listEtag) without hashing the page, and a conditional request is answered without reading it.
 * Earlier generations' documents hold the count alone.
 */
export interface FormSetListDoc {
  formSetId: string;
  /** How many of its entries are live: the list's total without a search (every live entry has a view in every locale). */
  liveEntries: number;
  /** The id of the last event that changed the list (the sitemaps' version, its position, is in site_versions). */
  eventId?: string;
}

/** The event a projection step applies, as the public outputs it changes name it (touchSite). */
export interface PublicChange {
  /** Its position (encodePosition): the sitemaps' and llms.txt's version. */
  version: string;
  /** Its id: unlike a position, never the same for another event, even in a log restored from an older backup. */
  eventId: string;
}

/**
 * The sync feed (GET /sync): the last change of each entry's or master's public output, one document per entry
 * or master (id syncLogId), ordered by `seq` (where in the log it happened, then the entry's or master's id:
 * text order is log order). A site that read the feed up to a seq has applied every change up to it; a later
 * change of the same entry moves its document forward, so the feed says what to apply, not every step.
 */
export interface SyncLogDoc {
  projectId: string;
  /** `${encodePosition(position)}:${entryId or masterId}`. */
  seq: string;
  kind: 'entry' | 'master';
  /** Taken out of the public API (unpublished by a deletion, its form set deleted; a master unpublished). */
  removed: boolean;
  /** An entry's: its form set's id and slug, its slug, and its former slugs (where a site redirects from). */
  entryId?: string;
  formSetId?: string;
  formSetSlug?: string;
  slug?: string;
  previousSlugs?: string[];
  /** A master's: its id and key. */
  masterId?: string;
  key?: string;
}

export function syncLogId(kind: SyncLogDoc['kind'], id: string): string {
  return `${kind}:${id}`;
}

export interface SlugRedirectDoc {
  formSetId: string;
  oldSlug: string;
  entryId: string;
}

export interface MasterSourceDoc {
  masterId: string;
  projectId: string;
  key: string;
  name: string;
  records: MasterRecord[];
  sitePublishedAt: string | null;
}

export interface MasterViewDoc {
  masterId: string;
  projectId: string;
  key: string;
  locale: string;
  /** Whether the master is public (site_published_at set); unpublished views are kept but never served. */
  published: boolean;
  entity: { id: string; key: string; name: string; recordCount: number; publishedAt: string | null };
  records: Array<{ value: string; label: string; parent: string | null }>;
}

/** A document as the read model stores it: its fields and any others a store keeps. */
export type { Doc } from '../src/read-models/read-model-store.ts';

/**
 * A document of `entry_views`. Versions 3 and 4 wrote the whole view beside its serialised parts, version 2
 * without them; reads take either while a rebuild after an upgrade runs.
 */
export type EntryViewDoc = StoredEntryView | (EntryView & Partial<SerialisedEntry>);

export const entryViewId = (entryId: string, locale: string): string => `${entryId}:${locale}`;
export const slugRedirectId = (formSetId: string, oldSlug: string): string => `${formSetId}:${oldSlug}`;
export const masterViewId = (masterId: string, locale: string): string => `${masterId}:${locale}`;
