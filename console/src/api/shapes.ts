import type { AdminSchema } from '@annals/client';

/**
 * The admin API's answers as the console reads them: the typed client's shapes, generated from the service's
 * OpenAPI document (/admin/v1/openapi.json), named as the console's components speak of them.
 */
export type FormSet = AdminSchema<'FormSet'>;
export type FieldDefinition = FormSet['definition']['fields'][number];
export type EntrySummary = AdminSchema<'EntrySummary'>;
export type Revision = AdminSchema<'Revision'>;
/** A revision as the revision list gives it: without its field values. */
export type RevisionSummary = AdminSchema<'RevisionSummary'>;
export type Asset = AdminSchema<'Asset'>;
export type Actor = AdminSchema<'HistoryItem'>['actor'];
export type Diff = AdminSchema<'RevisionDiff'>;
/** The signed-in person, as POST /auth/login and GET /auth/session give them. */
export type SessionUser = AdminSchema<'Session'>['user'];
export type FieldChange = Diff['changes'][number];
