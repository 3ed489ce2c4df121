/** The admin API's answers as the console reads them (see the OpenAPI document at /admin/v1/openapi.json). */
export type RevisionStatus = 'draft' | 'pending_review' | 'scheduled' | 'published' | 'rejected' | 'superseded';
export type FieldType = 'text' | 'url' | 'textarea' | 'tiptap' | 'number' | 'boolean' | 'date' | 'select' | 'radio' | 'multiselect' | 'image' | 'file' | 'image_gallery' | 'video_embed' | 'entry_ref';

export interface FieldDefinition {
  key: string;
  type: FieldType;
  label: string;
  description?: string;
  required?: boolean;
  locale_shared?: boolean;
  masterEntityKey?: string;
  limits?: { minLength?: number; maxLength?: number; pattern?: string; min?: number; max?: number; integer?: boolean; maxItems?: number };
}

export interface FormSet {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  version: number;
  definition: { fields: FieldDefinition[]; blocks?: Array<{ id: string; label: string; fieldKeys: string[] }> };
}

export interface EntrySummary {
  id: string;
  slug: string;
  formSetId: string;
  previousSlugs: string[];
  assignee: string | null;
  title: string;
  latestRevision: { revisionId: string; revision: number; status: RevisionStatus } | null;
  liveRevision: { revisionId: string; revision: number; publishedAt: string } | null;
  revisionCount: number;
  localeCoverage?: string[];
  createdAt: string;
  updatedAt: string;
  updatedBy: { type: string; id: string } | null;
}

export interface Revision {
  id: string;
  revisionId: string;
  entryId: string;
  revision: number;
  status: RevisionStatus;
  updatedAt: string;
  publishAt: string | null;
  publishedAt: string | null;
  rejectedReason?: string;
  snapshot?: Record<string, unknown>;
}

export interface Asset {
  id: string;
  fileName: string;
  mimeType: string;
  kind: string;
  byteSize: number;
  width?: number | null;
  height?: number | null;
  altText: string;
  caption: string;
  uploadedAt: string;
  url: string;
}

export interface Actor {
  type: string;
  id: string;
}

export interface HistoryItem {
  position: string;
  eventId: string;
  type: string;
  kind: string;
  actor: Actor;
  occurredAt: string;
  revisionId: string | null;
  revision: number | null;
  streamId?: string;
  entryId?: string | null;
}

export interface FieldChange {
  field: string;
  locale?: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
  blocks?: Array<{ kind: string; before?: { type: string; text: string }; after?: { type: string; text: string }; words?: Array<{ op: '=' | '-' | '+'; text: string }> }>;
}

export interface Diff {
  entryId: string;
  from: { revisionId: string; revision: number; status: RevisionStatus };
  to: { revisionId: string; revision: number; status: RevisionStatus };
  changes: FieldChange[];
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
