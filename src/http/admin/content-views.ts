/** The admin API's answers for form sets, entries and revisions, shaped from their read-model documents. */

export function formSetSummary(doc: Record<string, unknown>) {
  return { id: doc['formSetId'], slug: doc['slug'], name: doc['name'], description: doc['description'] ?? null, version: doc['version'] };
}

export function formSetDetail(doc: Record<string, unknown>) {
  return { ...formSetSummary(doc), definition: doc['definition'] };
}

export function entrySummary(doc: Record<string, unknown>) {
  return {
    id: doc['entryId'],
    slug: doc['slug'],
    formSetId: doc['formSetId'],
    previousSlugs: doc['previousSlugs'],
    importPath: doc['importPath'] ?? null,
    external: doc['external'] ?? null,
    assignee: doc['assignee'] ?? null,
    latestRevision: doc['latestRevision'] ?? null,
    liveRevision: doc['liveRevision'] ?? null,
    createdAt: doc['createdAt'],
    updatedAt: doc['updatedAt'],
  };
}

export function revisionSummary(doc: Record<string, unknown>) {
  return {
    id: doc['revisionId'],
    revisionId: doc['revisionId'],
    entryId: doc['entryId'],
    revision: doc['revision'],
    status: doc['status'],
    updatedAt: doc['savedAt'],
    publishAt: doc['publishAt'] ?? null,
    publishedAt: doc['publishedAt'] ?? null,
  };
}
