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
  const operations = new Map(Object.values(document.paths).flatMap((methods) => Object.values(methods)).map((op) => [op.operationId, op]));
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  return (operationId, status, body) => {
    const key = `${operationId} ${status}`;
    let validate = compiled.get(key);
    if (!validate) {
      const schema = operations.get(operationId)?.responses[String(status)]?.content?.['application/json']?.schema;
      expect(schema, `${key}: no JSON schema documented`).to.be.an('object');
      expect(schema, `${key}: documented as any object`).to.not.deep.equal({ type: 'object' });
      validate = ajv.compile(schema!);
      compiled.set(key, validate);
    }
    expect(validate(body), `${key}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 1000)}`).to.equal(true);
  };
}
