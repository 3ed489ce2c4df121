import { invalid } from '../../domain-error.ts';

/**
 * Import metadata of an entry (spec section 2): an import path and an external identity
 * (sourceType, entityType, externalId), with the lengths spec section 8 gives for the by-external-id
 * lookup. Our rules beyond the spec: every given value is 1 character or more, holds no control
 * characters, and the import path is at most 2000 characters.
 */
export const SOURCE_TYPE_MAX = 50;
export const ENTITY_TYPE_MAX = 200;
export const EXTERNAL_ID_MAX = 2000;
export const IMPORT_PATH_MAX = 2000;

export interface ImportMetadataInput {
  importPath?: string | null | undefined;
  external?: { sourceType?: string | undefined; entityType?: string | undefined; externalId: string } | null | undefined;
}

const CONTROL = /[\u0000-\u001f\u007f]/;

function checkText(value: unknown, field: string, max: number): void {
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (value.length === 0) throw invalid(`${field} must not be empty`);
  if (value.length > max) throw invalid(`${field} must be at most ${max} characters (it has ${value.length})`);
  if (CONTROL.test(value)) throw invalid(`${field} must not contain control characters`);
}

/** Throws VALIDATION_ERROR naming the field (importPath, external.sourceType, ...) and the limit it breaks. */
export function validateImportMetadata(input: ImportMetadataInput): void {
  if (input.importPath !== undefined && input.importPath !== null) checkText(input.importPath, 'importPath', IMPORT_PATH_MAX);
  const external = input.external;
  if (external === undefined || external === null) return;
  if (typeof external !== 'object') throw invalid('external must be an object {sourceType?, entityType?, externalId}');
  if (external.sourceType !== undefined) checkText(external.sourceType, 'external.sourceType', SOURCE_TYPE_MAX);
  if (external.entityType !== undefined) checkText(external.entityType, 'external.entityType', ENTITY_TYPE_MAX);
  if (external.externalId === undefined) throw invalid('external.externalId is required when an external identity is given');
  checkText(external.externalId, 'external.externalId', EXTERNAL_ID_MAX);
}
