// Generates the client's types from the service's two OpenAPI documents (openapi-typescript 7), and the
// list of operations that take an Idempotency-Key. Used by `npm run client:generate` at the repository
// root (which writes the files) and by the test that fails when the committed files differ from what the
// served documents give (test/openapi/client-types.test.ts).
import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';

const HEADER = COMMENT_HEADER.replace('openapi-typescript.', 'openapi-typescript from the OpenAPI document the service serves.\n * Regenerate with `npm run client:generate` at the repository root.');

/** The generated files of src/generated/, by file name, from the admin and public documents as served. */
export async function generatedFiles(adminDocument, publicDocument) {
  const options = { silent: true, alphabetize: false, exportType: true, emptyObjectsUnknown: true };
  const admin = HEADER + astToString(await openapiTS(structuredClone(adminDocument), options));
  const pub = HEADER + astToString(await openapiTS(structuredClone(publicDocument), options));
  return { 'admin.ts': admin, 'public.ts': pub, 'idempotent-operations.ts': idempotentOperations(adminDocument) };
}

/** `METHOD /path` of every admin operation declaring the Idempotency-Key header, for the client to send one. */
function idempotentOperations(document) {
  const parameters = document.components?.parameters ?? {};
  const declares = (parameter) => {
    const resolved = parameter.$ref ? parameters[parameter.$ref.split('/').pop()] : parameter;
    return resolved?.in === 'header' && resolved.name.toLowerCase() === 'idempotency-key';
  };
  const operations = [];
  for (const [path, methods] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(methods)) {
      if ((operation.parameters ?? []).some(declares)) operations.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return `${HEADER}/** Admin operations that take an Idempotency-Key: the client sends a fresh one when the caller gives none. */
export const IDEMPOTENT_OPERATIONS: ReadonlySet<string> = new Set([
${operations.map((o) => `  ${JSON.stringify(o)},`).join('\n')}
]);
`;
}
