import { expect } from 'chai';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type FormatsPlugin = typeof addFormatsModule.default;
const addFormats: FormatsPlugin = (addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? (addFormatsModule as unknown as FormatsPlugin);

interface Operation {
  operationId: string;
  responses: Record<string, { content?: { 'application/json'?: { schema: Record<string, unknown> } } }>;
}

/**
 * Checks answers against the admin API's own OpenAPI document (served by the running service): the JSON
 * schema documented for the operation and status must accept the body, so the document cannot drift from
 * what the routes answer.
 */
export async function documentedResponses(serviceUrl: string): Promise<(operationId: string, status: number, body: unknown) => void> {
  const document = (await (await fetch(`${serviceUrl}/admin/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
  // Where each operation is in the document: its schemas refer to #/components/schemas, so they are compiled in place.
  const operations = new Map(Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => [op.operationId, { op, pointer: `/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}` }] as const)));
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateSchema: false });
  addFormats(ajv);
  const id = 'urn:annals-openapi:admin';
  ajv.addSchema({ ...document, $id: id });
  const compiled = new Map<string, ValidateFunction>();
  return (operationId, status, body) => {
    const key = `${operationId} ${status}`;
    let validate = compiled.get(key);
    if (!validate) {
      const operation = operations.get(operationId);
      const schema = operation?.op.responses[String(status)]?.content?.['application/json']?.schema;
      expect(schema, `${key}: no JSON schema documented`).to.be.an('object');
      expect(schema, `${key}: documented as any object`).to.not.deep.equal({ type: 'object' });
      const pointer = `${operation!.pointer}/responses/${status}/content/application~1json/schema`;
      validate = ajv.compile({ $ref: `${id}#${pointer.split('/').map(encodeURIComponent).join('/')}` });
      compiled.set(key, validate);
    }
    expect(validate(body), `${key}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 1000)}`).to.equal(true);
  };
}
