/**
 * The documents of the content read model (./content.ts says what each collection holds and how it is folded).
 */
import type { ExternalIdentity, Snapshot } from '../src/domain/content/entry/entry-events.ts';
import type { RevisionStatus } from '../src/domain/content/entry/entry-workflow.ts';
import type { FormSetDefinition } from '../src/domain/content/form-set/form-set-definition.ts';
import type { MasterRecord } from '../src/domain/content/master/master-entity.ts';

export interface FormSetDoc {
  formSetId: string;
  projectId: string;
  slug: string;
  name: string;
  description: string | null;
  definition: FormSetDefinition;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface EntryDoc {
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  /** Former slugs, oldest first; never the current one. */
  previousSlugs: string[];
  importPath: string | null;
  external: ExternalIdentity | null;
  assignee: string | null;
  createdAt: string;
  updatedAt: string;
  updatedAtMs: number;
  /** Who made the last change: the actor's type and id. */
  updatedBy: { type: string; id: string };
  /** The log position of the last change (encodePosition). */
  updatedPosition: string;
  latestRevision: { revisionId: string; revision: number; status: RevisionStatus } | null;
  liveRevision: { revisionId: string; revision: number; publishedAt: string } | null;
  revisionCount: number;
  title: string;
  titleSort: string;
  search: string;
  /** The locales the latest revision has text in (EntryListing.locales). */
  locales: string[];
  duplicatedFrom: { entryId: string; revisionId?: string; revision?: number } | null;
}

export interface RevisionDoc {
  revisionId: string;
  entryId: string;
  projectId: string;
  formSetId: string;
  revision: number;
  status: RevisionStatus;
  snapshot: Snapshot;
  /** Who saved it. */
  savedBy: { type: string; id: string };
  savedAt: string;
  /** When the status last changed (or the save). */
  updatedAt: string;
  /** The last time it was submitted for review. */
  submittedAt?: string;
  /** Set while scheduled; kept once the scheduled job has published it. */
  publishAt: string | null;
  publishedAt: string | null;
  /** What published it: approve, publish or schedule. */
  publishTrigger?: string;
  /** When and by which revision a published revision was superseded. */
  supersededAt?: string;
  supersededBy?: string;
  /** While rejected. */
  rejectedReason?: string;
  rejectedAt?: string;
  /** The older revision whose snapshot this one restored. */
  restoredFrom?: { revisionId: string; revision: number };
}

/**
 * A revision as the read model stores it (version 4): the log position of its entry.revision-saved (20 digits),
 * where its snapshot is read, instead of the snapshot.
 */
export type StoredRevisionDoc = Omit<RevisionDoc, 'snapshot'> & { snapshotAt: string };

export interface SlugRedirectDoc {
  formSetId: string;
  projectId: string;
  oldSlug: string;
  entryId: string;
}

export interface MasterDoc {
  masterId: string;
  projectId: string;
  key: string;
  name: string;
  /** In display order: depth first from the roots, siblings by order then value. */
  records: MasterRecord[];
  recordCount: number;
  /** Set while published to the site; the master is public only then. */
  sitePublishedAt: string | null;
  createdAt: string;
  updatedAt: string;
}
