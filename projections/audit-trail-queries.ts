/**
 * Where the rest of the service reads the audit trail (./audit-trail.ts): its records are only ever paged by
 * keyset (an entry's history, a project's audit log), by keysetPage in src/application/keyset-page.ts.
 */
export const AUDIT_TRAIL_LISTS = {
  records: { projection: 'audit-trail', collection: 'records' },
} as const;
