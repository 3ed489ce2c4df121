import { createHash } from 'node:crypto';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type FormatsPlugin = typeof addFormatsModule.default;
const addFormats: FormatsPlugin = (addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? (addFormatsModule as unknown as FormatsPlugin);

interface DeclaredResponse {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
}
interface Operation {
  operationId: string;
  responses: Record<string, DeclaredResponse>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: { responses?: Record<string, DeclaredResponse> };
}

/** One served OpenAPI document, compiled once per distinct text however many services serve it. */
interface Checker {
  api: 'admin' | 'public';
  /** Path templates as patterns, literal ones first: `/revisions/bulk-schedule` before `/revisions/{revisionId}`. */
  templates: Array<{ template: string; pattern: RegExp }>;
  document: Document;
  ajv: Ajv2020;
  id: string;
  compiled: Map<string, ValidateFunction>;
}

const realFetch = globalThis.fetch;
const byText = new Map<string, Checker>();
const byOrigin = new Map<string, Promise<Checker | null | undefined>>();
const reloadedAt = new Map<string, number>();
let installed = false;

/** Which API a path belongs to, and the operation path under its base (null: neither API). */
function apiPath(pathname: string): { api: 'admin' | 'public'; path: string } | null {
  if (pathname.endsWith('/openapi.json')) return null;
  const admin = /^\/admin\/v1(\/.*)$/.exec(pathname);
  if (admin) return { api: 'admin', path: admin[1]! };
  const pub = /^\/public\/(?:p\/[^/]+\/)?v1(\/.*)$/.exec(pathname);
  if (pub) return { api: 'public', path: pub[1]! };
  return null;
}

/**
 * Every admin and public answer a test receives through fetch is checked against the OpenAPI document
 * the answering service serves (GET /admin/v1/openapi.json, /public/v1/openapi.json): the status must be
 * one its operation declares, and a JSON body must match the schema of that status, undeclared fields
 * included (the documents close their objects). A mismatch fails the request, so the test fails.
 * Paths no operation has (unknown routes, 405s) and servers that serve no document are not checked.
 */
export function installResponseValidation(): void {
  if (installed) return;
  installed = true;
  globalThis.fetch = validatingFetch as typeof fetch;
}

async function validatingFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const response = await realFetch(input, init);
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toLowerCase();
  if (!apiPath(url.pathname) || method === 'head' || method === 'options') return response;
  const type = response.headers.get('content-type') ?? '';
  const readsBody = /[/+]json\b/.test(type) && response.status !== 204 && response.status !== 304;
  const text = readsBody ? await response.text() : '';
  const problem = await checkAnswer(url.origin, method, url.pathname, { status: response.status, contentType: type, text });
  if (problem) throw new Error(problem.message);
  if (!readsBody) return response;
  const copy = new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(copy, 'url', { value: response.url });
  Object.defineProperty(copy, 'redirected', { value: response.redirected });
  return copy;
}

/** What an answer does that its OpenAPI operation does not declare. */
export interface AnswerProblem {
  kind: 'undeclared-status' | 'undeclared-body' | 'schema';
  /** The operation, as `admin getEntry`. */
  operation: string;
  message: string;
}

/**
 * The check of one answer against the OpenAPI document the service at `origin` serves (the same check the
 * fetch hook runs; the fuzzer runs it on its raw answers): null when the answer is declared, or when the path is
 * no operation's (unknown routes, 405s, paths refused before routing) or the service serves no document.
 * `text` is the body when it is JSON.
 */
export async function checkAnswer(origin: string, method: string, pathname: string, answer: { status: number; contentType: string; text: string }): Promise<AnswerProblem | null> {
  const target = apiPath(pathname);
  method = method.toLowerCase();
  if (!target || method === 'head' || method === 'options') return null;
  const checker = await checkerFor(origin, target.api);
  if (!checker) return null;
  const problem = checkWith(checker, method, pathname, target.path, answer);
  const known = findOperation(checker, target.path, method) !== undefined;
  if (problem === null && known) return null;
  // The document was read from this origin earlier, maybe from another server that had its port before (a long
  // serial run reuses ports): before failing an answer, read it again; before passing a path it does not have,
  // too, at most once a second per origin (fuzzers send thousands of unknown paths).
  const key = `${origin} ${target.api}`;
  if (problem === null && Date.now() - (reloadedAt.get(key) ?? 0) < 1000) return null;
  reloadedAt.set(key, Date.now());
  const current = await reloadChecker(origin, target.api);
  if (!current || current === checker) return problem;
  return checkWith(current, method, pathname, target.path, answer);
}

function checkWith(checker: Checker, method: string, pathname: string, path: string, answer: { status: number; contentType: string; text: string }): AnswerProblem | null {
  const target = { api: checker.api, path };
  const operation = findOperation(checker, target.path, method);
  if (!operation) return null;
  const name = `${target.api} ${operation.operationId}`;
  const where = `${method.toUpperCase()} ${pathname} (${name})`;
  const declaredStatus = operation.responses[String(answer.status)] ? String(answer.status) : 'default';
  const declared = resolved(checker, operation.responses[declaredStatus]);
  if (!declared) return { kind: 'undeclared-status', operation: name, message: `${where} answered ${answer.status}, a status its OpenAPI operation does not declare (declared: ${Object.keys(operation.responses).join(', ')})` };
  if (!/[/+]json\b/.test(answer.contentType) || answer.status === 204 || answer.status === 304 || answer.text === '') return null;
  const schemaPointer = Object.keys(declared.content ?? {}).find((t) => /[/+]json$/.test(t));
  if (!schemaPointer) return { kind: 'undeclared-body', operation: name, message: `${where} answered ${answer.status} with a JSON body its OpenAPI operation does not declare: ${answer.text.slice(0, 300)}` };
  const validate = validator(checker, operation, declaredStatus, schemaPointer);
  let body: unknown;
  try {
    body = JSON.parse(answer.text) as unknown;
  } catch {
    return { kind: 'schema', operation: name, message: `${where} answered ${answer.status} with a body that is not JSON though its type says so: ${answer.text.slice(0, 300)}` };
  }
  if (!validate(body)) {
    return { kind: 'schema', operation: name, message: `${where} answered ${answer.status} with a body its OpenAPI schema refuses: ${checker.ajv.errorsText(validate.errors, { separator: '; ' })}\n${answer.text.slice(0, 1500)}` };
  }
  return null;
}

/**
 * Forgets every document read: the hooks call it when a test file begins, since the servers of the files before
 * are gone and their ports may be another server's now.
 */
export function forgetServedDocuments(): void {
  byOrigin.clear();
  reloadedAt.clear();
}

/** The document `origin` serves now, read again, replacing the one kept for it. */
async function reloadChecker(origin: string, api: 'admin' | 'public'): Promise<Checker | null> {
  const key = `${origin} ${api}`;
  const loading = loadChecker(origin, api);
  byOrigin.set(key, loading);
  const checker = await loading;
  if (checker === undefined) byOrigin.delete(key);
  return checker ?? null;
}

function checkerFor(origin: string, api: 'admin' | 'public'): Promise<Checker | null> {
  const key = `${origin} ${api}`;
  let checker = byOrigin.get(key);
  if (!checker) {
    const loading = loadChecker(origin, api);
    byOrigin.set(key, loading);
    // A service that could not answer (stopping, starting) is asked again next time.
    void loading.then((c) => c === undefined && byOrigin.delete(key));
    checker = loading;
  }
  return checker.then((c) => c ?? null);
}

async function loadChecker(origin: string, api: 'admin' | 'public'): Promise<Checker | null | undefined> {
  let text: string;
  try {
    const response = await realFetch(`${origin}/${api}/v1/openapi.json`);
    if (response.status === 404) return null;
    if (!response.ok) return undefined;
    text = await response.text();
  } catch {
    return undefined;
  }
  const hash = createHash('sha256').update(text).digest('hex');
  const known = byText.get(hash);
  if (known) return known;
  const document = JSON.parse(text) as Document;
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateSchema: false });
  addFormats(ajv);
  const id = `urn:annals-openapi:${hash}`;
  ajv.addSchema({ ...document, $id: id } as never);
  const templates = Object.keys(document.paths)
    .map((template) => ({ template, params: (template.match(/\{/g) ?? []).length, pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`) }))
    .sort((a, b) => a.params - b.params)
    .map(({ template, pattern }) => ({ template, pattern }));
  const checker: Checker = { api, templates, document, ajv, id, compiled: new Map() };
  byText.set(hash, checker);
  return checker;
}

function findOperation(checker: Checker, path: string, method: string): Operation | undefined {
  for (const { template, pattern } of checker.templates) {
    if (!pattern.test(path)) continue;
    const operation = checker.document.paths[template]![method];
    if (operation) return operation;
  }
  return undefined;
}

/** A declared response, its $ref (#/components/responses/...) followed. */
function resolved(checker: Checker, response: DeclaredResponse | undefined): DeclaredResponse | undefined {
  const name = response?.$ref?.replace('#/components/responses/', '');
  return name === undefined ? response : checker.document.components?.responses?.[name];
}

function validator(checker: Checker, operation: Operation, declaredStatus: string, contentType: string): ValidateFunction {
  const key = `${operation.operationId} ${declaredStatus} ${contentType}`;
  let validate = checker.compiled.get(key);
  if (!validate) {
    const [template, methods] = Object.entries(checker.document.paths).find(([, m]) => Object.values(m).includes(operation))!;
    const method = Object.keys(methods).find((m) => methods[m] === operation)!;
    const ref = operation.responses[declaredStatus]!.$ref?.replace('#/components/responses/', '');
    const base = ref === undefined ? ['paths', template, method, 'responses', declaredStatus] : ['components', 'responses', ref];
    const pointer = [...base, 'content', contentType, 'schema'].map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    validate = checker.ajv.compile({ $ref: `${checker.id}#/${pointer.split('/').map(encodeURIComponent).join('/')}` });
    checker.compiled.set(key, validate);
  }
  return validate;
}
