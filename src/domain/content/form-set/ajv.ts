import { Ajv2020, type ErrorObject, type ValidateFunction, type AnySchemaObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the module object.
type FormatsPlugin = typeof addFormatsModule.default;
const addFormats: FormatsPlugin = (addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? (addFormatsModule as unknown as FormatsPlugin);

export type { ErrorObject, ValidateFunction, AnySchemaObject };

/**
 * One ajv configuration for every JSON Schema of the content domain (JSON Schema 2020-12, the dialect of
 * OpenAPI 3.1): every error reported, strict about the schemas we write, formats from ajv-formats.
 */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats(ajv);
  return ajv;
}
