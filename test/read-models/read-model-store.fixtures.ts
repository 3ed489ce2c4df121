/**
 * What the read-model port's conformance suites share: schemas, times, and document writes.
 */
import type { DocumentWrite, ReadModelSchema } from '../../src/read-models/read-model-store.ts';
export const NOW = '2026-11-22T10:00:00.000Z';
export const LATER = '2026-11-22T11:00:00.000Z';

export const articlesSchema: ReadModelSchema = {
  projection: 'test-articles',
  collections: {
    articles: {
      indexes: [
        { name: 'by_slug', fields: [['slug', 1]], unique: true },
        { name: 'by_status_date', fields: [['status', 1], ['meta.publishedAt', -1]] },
      ],
    },
    tags: {},
  },
};

/** A list whose index holds each item's serialised JSON and a number besides its keys (IndexSpec.include). */
export const coveredSchema: ReadModelSchema = {
  projection: 'test-covered',
  collections: {
    items: { indexes: [{ name: 'by_list', fields: [['list', 1], ['rank', 1]], include: ['item', 'n'] }] },
  },
};

/** A sparse index (IndexSpec.sparse): most documents have no import path. */
export const sparseSchema: ReadModelSchema = {
  projection: 'test-sparse',
  collections: {
    items: { indexes: [{ name: 'by_path', fields: [['site', 1], ['path', 1]], sparse: true }] },
  },
};

/** A collection searched through its `search` field (tokens of indexText), and one that cannot be. */
export const searchSchema: ReadModelSchema = {
  projection: 'test-search',
  collections: {
    pages: {
      indexes: [{ name: 'by_site', fields: [['site', 1]] }],
      textField: 'search',
    },
    plain: {},
  },
};

/**
 * What the tests that commit thousands of documents need of a server (AdapterHarness.lacks): each write found
 * by an index. FerretDB v1 pushes no filter down but a lone `_id` equality, so each position-guarded write
 * scans its collection (a commit of 20,000 documents takes hours).
 */
export const BULK_WRITES = 'writes filtered by an index (it scans the collection for each position-guarded write)';


export function put(collection: string, id: string, position: bigint, doc: Record<string, unknown>): DocumentWrite {
  return { collection, id, doc, position };
}

export function del(collection: string, id: string, position: bigint): DocumentWrite {
  return { collection, id, doc: null, position };
}
