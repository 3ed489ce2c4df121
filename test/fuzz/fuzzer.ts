/**
 * A seeded, bounded fuzzer for the HTTP APIs (issue 12). It reads both OpenAPI documents of a started service
 * (admin at /admin/v1/openapi.json, public at /public/v1/openapi.json) and sends every operation a number of
 * requests, each made valid-ish from the operation's own schemas and then spoiled in one of the ways an attacker
 * or a broken client would: odd path casing, encoded slashes, dot segments, double slashes, wrong types, huge
 * and deep bodies, bad Content-Encoding, control characters, wrong content types, missing or bad credentials.
 *
 * A finding is any 5xx, any request that is not answered within the timeout, and any error response of the
 * application (it carries X-Request-Id, or is JSON) that is not in the envelope `{error: {code, message,
 * hint?, retryable?}}`. The same seed makes the same requests.
 */
import { gzipSync } from 'node:zlib';
import { nonCanonicalPathReason } from '../../src/http/middleware/canonical-path.ts';
import { isErrorEnvelope, rawRequest } from '../support/raw-http.ts';
import { checkAnswer } from '../support/response-validation.ts';

type Schema = Record<string, unknown>;

export interface FuzzTarget {
  /** Where the service listens, e.g. http://127.0.0.1:8080. */
  url: string;
  projectId: string;
  /**
   * The project's agent keys: the fuzzer spreads its agent-key requests over them, each paced below its rate
   * limit (see KeyPacer), as a population of agents would, rather than have a third of them answered 429.
   */
  agentKeys: string[];
  publicKey: string;
  /** A fresh console session token (called again whenever one is needed: the fuzzer may sign sessions out). */
  session: () => Promise<string>;
  /** Real values for path parameters, by parameter name (formSetId, entrySlug, ...). */
  known: Record<string, string[]>;
}

export interface FuzzOptions {
  seed: number;
  /** Requests per operation. */
  perOperation: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** A request not answered within this long is a finding. Default 15 000. */
  timeoutMs?: number;
  /** Progress lines (stderr in the CLI). */
  progress?: (line: string) => void;
  /**
   * Requests one agent key may send per 60 s: below its rate limit (300 per 60 s from the Standard plan) by
   * half, since the service's sliding-window estimate may count the previous window in full. Default 149.
   */
  agentKeyBudget?: number;
}

export interface Finding {
  operation: string;
  mutation: string;
  method: string;
  path: string;
  status: number | 'timeout' | 'error';
  excerpt: string;
  /** Seed of this one request: the run's seed and this number reproduce it. */
  request: number;
}

export interface FuzzReport {
  seed: number;
  operations: number;
  requests: number;
  byStatus: Record<string, number>;
  byMutation: Record<string, number>;
  serverErrors: number;
  /** Answers 429 (a rate limit refused the request before its handler). */
  rateLimited: number;
  /** Answers with a status their OpenAPI operation does not declare (each one is also a finding). */
  undeclaredStatuses: number;
  /** Answers whose body their OpenAPI operation does not declare or whose schema refuses it (each one is also a finding). */
  undeclaredBodies: number;
  findings: Finding[];
}

interface Operation {
  api: 'admin' | 'public';
  method: string;
  template: string;
  operationId: string;
  open: boolean;
  parameters: Array<{ name: string; in: string; required: boolean; schema: Schema }>;
  body: Schema | undefined;
  components: Record<string, Schema>;
}

/** mulberry32: small, fast, good enough to pick from lists reproducibly. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Dice {
  constructor(readonly next: () => number) {}
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  uuid(): string {
    const hex = () => this.int(16).toString(16);
    const part = (n: number) => Array.from({ length: n }, hex).join('');
    return `${part(8)}-${part(4)}-4${part(3)}-${this.pick(['8', '9', 'a', 'b'])}${part(3)}-${part(12)}`;
  }
  word(max = 12): string {
    return Array.from({ length: 1 + this.int(max) }, () => this.pick('abcdefghijklmnopqrstuvwxyz0123456789-'.split(''))).join('').replace(/^-+|-+$/g, '') || 'x';
  }
}

/** Where the fuzz target's console sessions sign in from (fuzz-target.ts). */
export const SESSION_ADDRESS = '192.0.2.1';

const CONTROL = ['\u0000', '\u0001', '\u0007', '\u0008', '\u000b', '\u001b', '\u001f', '\u007f', '\r\n', '\u2028', '\ud800'];
const MUTATIONS = [
  'valid',
  'wrong-types',
  'odd-casing',
  'encoded-slash',
  'dot-segments',
  'double-slash',
  'huge-body',
  'deep-body',
  'bad-encoding',
  'control-characters',
  'wrong-content-type',
  'bad-credentials',
  'long-query',
] as const;
type Mutation = (typeof MUTATIONS)[number];

async function loadOperations(url: string): Promise<Operation[]> {
  const out: Operation[] = [];
  for (const api of ['admin', 'public'] as const) {
    const document = (await (await fetch(`${url}/${api}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; security?: unknown[]; parameters?: Array<Record<string, unknown>>; requestBody?: { content?: Record<string, { schema?: Schema }> }; responses?: Record<string, { content?: Record<string, unknown> }> }>>;
      components?: { schemas?: Record<string, Schema>; parameters?: Record<string, Record<string, unknown>> };
    };
    for (const [template, methods] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        // An event stream answers for as long as the client listens: its own tests cover it (test/public/sync-feed.test.ts).
        if (op.responses?.['200']?.content?.['text/event-stream']) continue;
        const parameters = (op.parameters ?? []).map((p) => {
          const resolved = typeof p['$ref'] === 'string' ? document.components?.parameters?.[String(p['$ref']).split('/').pop()!] ?? {} : p;
          return { name: String(resolved['name']), in: String(resolved['in']), required: Boolean(resolved['required']), schema: (resolved['schema'] ?? {}) as Schema };
        });
        out.push({
          api,
          method: method.toUpperCase(),
          template,
          operationId: op.operationId,
          open: Array.isArray(op.security) && op.security.length === 0,
          parameters,
          body: op.requestBody?.content?.['application/json']?.schema,
          components: document.components?.schemas ?? {},
        });
      }
    }
  }
  // Deletions last, so that they take away as little as possible from the operations before them.
  return out.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
}

/** A value for `schema`, valid as far as this small generator understands JSON Schema. */
function instance(schema: Schema | undefined, dice: Dice, components: Record<string, Schema>, depth = 0): unknown {
  if (!schema || depth > 6) return dice.pick([null, 'x', 1, true]);
  if (typeof schema['$ref'] === 'string') return instance(components[String(schema['$ref']).split('/').pop()!], dice, components, depth + 1);
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum'])) return dice.pick(schema['enum'] as unknown[]);
  for (const key of ['anyOf', 'oneOf'] as const) if (Array.isArray(schema[key])) return instance(dice.pick(schema[key] as Schema[]), dice, components, depth + 1);
  if (Array.isArray(schema['allOf'])) return instance((schema['allOf'] as Schema[])[0], dice, components, depth + 1);
  const type = Array.isArray(schema['type']) ? dice.pick(schema['type'] as string[]) : schema['type'];
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
      const required = new Set((schema['required'] ?? []) as string[]);
      for (const [name, property] of Object.entries(properties)) if (required.has(name) || dice.chance(0.6)) out[name] = instance(property, dice, components, depth + 1);
      if (schema['additionalProperties'] && dice.chance(0.3)) out[dice.word(8)] = instance(schema['additionalProperties'] === true ? undefined : (schema['additionalProperties'] as Schema), dice, components, depth + 1);
      return out;
    }
    case 'array': {
      const min = Number(schema['minItems'] ?? 0);
      return Array.from({ length: min + dice.int(3) }, () => instance(schema['items'] as Schema | undefined, dice, components, depth + 1));
    }
    case 'integer':
    case 'number': {
      const min = typeof schema['minimum'] === 'number' ? schema['minimum'] : 0;
      const max = typeof schema['maximum'] === 'number' ? schema['maximum'] : min + 100;
      const value = min + dice.next() * (max - min);
      return type === 'integer' ? Math.round(value) : value;
    }
    case 'boolean':
      return dice.chance(0.5);
    case 'null':
      return null;
    case 'string': {
      if (schema['format'] === 'uuid') return dice.uuid();
      if (schema['format'] === 'date-time') return new Date(Date.now() + dice.int(1e10)).toISOString();
      if (schema['format'] === 'uri') return `https://example.com/${dice.word()}`;
      if (schema['format'] === 'email') return `${dice.word()}@example.com`;
      const max = typeof schema['maxLength'] === 'number' ? schema['maxLength'] : 40;
      return dice.word(Math.max(1, Math.min(max, 40)));
    }
    default:
      return dice.pick([dice.word(), dice.int(100), true, null, { a: 1 }, ['x']]);
  }
}

/** A value of another type than `value`. */
function wrongType(value: unknown, dice: Dice): unknown {
  const others: unknown[] = [12345, -1, 1e308, true, null, 'a string', [], [1, 'two'], { nested: { deeper: [] } }, '', '0', 'NaN'];
  const candidates = others.filter((o) => typeof o !== typeof value || Array.isArray(o) !== Array.isArray(value));
  return dice.pick(candidates);
}

function spoilTypes(body: unknown, dice: Dice): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return wrongType(body, dice);
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  const keys = Object.keys(out);
  if (keys.length === 0 || dice.chance(0.2)) return wrongType(body, dice);
  for (const key of keys) if (dice.chance(0.5)) out[key] = wrongType(out[key], dice);
  return out;
}

/** encodeURIComponent, with a lone surrogate sent as the three bytes it would be in UTF-8 (which UTF-8 forbids). */
function percentEncode(value: string): string {
  const hex = (byte: number) => byte.toString(16).toUpperCase().padStart(2, '0');
  let out = '';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    out += code >= 0xd800 && code <= 0xdfff ? `%${hex(0xe0 | (code >> 12))}%${hex(0x80 | ((code >> 6) & 0x3f))}%${hex(0x80 | (code & 0x3f))}` : encodeURIComponent(char);
  }
  return out;
}

/** `value` with a control character in each string (keys included), at any depth. */
function withControlStrings(value: unknown, dice: Dice): unknown {
  if (typeof value === 'string') return withControl(value, dice);
  if (Array.isArray(value)) return value.map((v) => withControlStrings(v, dice));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [dice.chance(0.2) ? withControl(k, dice) : k, withControlStrings(v, dice)]));
  return withControl(String(value), dice);
}

function withControl(text: string, dice: Dice): string {
  const at = dice.int(text.length + 1);
  return `${text.slice(0, at)}${dice.pick(CONTROL)}${text.slice(at)}`;
}

interface Built {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/**
 * Paces requests per agent key: a key is used only while it has sent fewer than `budget` requests in the last
 * 60 s; when every key has, the next request waits until the oldest of them leaves the window. So the keys'
 * rate limits (per key, per 60 s) are kept, as a population of agents each within its limit keeps them.
 */
class KeyPacer {
  readonly #sent: number[][];
  constructor(
    readonly keys: readonly string[],
    readonly budget: number,
  ) {
    this.#sent = keys.map(() => []);
  }

  async take(): Promise<string> {
    for (;;) {
      const now = Date.now();
      let soonest = Number.POSITIVE_INFINITY;
      for (let i = 0; i < this.keys.length; i++) {
        const sent = this.#sent[i]!;
        while (sent.length > 0 && now - sent[0]! >= 60_000) sent.shift();
        if (sent.length < this.budget) {
          sent.push(now);
          return this.keys[i]!;
        }
        soonest = Math.min(soonest, sent[0]! + 60_000 - now);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(10, soonest)));
    }
  }
}

/**
 * The address a request comes from, behind the service's trusted proxy (the target runs with TRUST_PROXY):
 * one per request from 198.18.0.0/15 (set aside for tests), so that the limits per client address (contact
 * submissions, sign-in throttling) meet a population of clients, as on a public site. Console sessions keep
 * the address they signed in from (their project's IP allowlist, which the fuzzer may fill, applies to it).
 */
function clientAddress(request: number): string {
  return `198.${18 + ((request >> 16) & 1)}.${(request >> 8) & 255}.${request & 255}`;
}

async function build(op: Operation, mutation: Mutation, dice: Dice, target: FuzzTarget, pacer: KeyPacer, request: number): Promise<Built> {
  const base = op.api === 'admin' ? '/admin/v1' : dice.chance(0.5) ? `/public/p/${target.projectId}/v1` : '/public/v1';
  const headers: Record<string, string> = { 'x-forwarded-for': clientAddress(request) };
  if (op.api === 'public' && base === '/public/v1') headers['x-service-public-api-key'] = target.publicKey;
  if (op.api === 'admin' && !op.open) {
    // Mostly console sessions: they are exempt from the agent keys' rate limit, so more requests reach the handlers.
    if (dice.chance(0.7)) {
      headers['authorization'] = `Bearer ${await target.session()}`;
      headers['x-project-id'] = target.projectId;
      headers['x-forwarded-for'] = SESSION_ADDRESS;
    } else {
      headers['authorization'] = `Bearer ${await pacer.take()}`;
    }
  }
  if (mutation === 'bad-credentials') {
    const spoiled = dice.pick(['Bearer', 'Bearer sk-agent-nope', 'Bearer service_pub_nope', 'Basic YTpi', `Bearer ${'x'.repeat(5000)}`, 'Bearer eyJhbGciOiJub25lIn0.e30.', '']);
    if (spoiled) headers['authorization'] = spoiled;
    else delete headers['authorization'];
    if (dice.chance(0.5)) headers['x-project-id'] = dice.pick(['nope', target.projectId.toUpperCase(), dice.uuid()]);
    if (op.api === 'public') headers['x-service-public-api-key'] = dice.pick(['service_pub_x', '', 'sk-agent-x']);
  }

  const fill = (name: string): string => {
    const known = target.known[name];
    let value = known && known.length > 0 && dice.chance(0.7) ? dice.pick(known) : /Id$|^id$/.test(name) ? dice.uuid() : dice.word();
    if (mutation === 'control-characters' && dice.chance(0.5)) value = withControl(value, dice);
    if (mutation === 'wrong-types' && dice.chance(0.5)) value = dice.pick(['-1', '1.5', 'null', 'true', '[]', '%7B%7D', '9'.repeat(40)]);
    return percentEncode(value);
  };
  let path = op.template.replace(/\{([^}]+)\}/g, (_all, name: string) => fill(name));
  switch (mutation) {
    case 'odd-casing':
      path = dice.chance(0.5) ? path.toUpperCase() : path.replace(/[a-z]/g, (c) => (dice.chance(0.3) ? c.toUpperCase() : c));
      break;
    case 'encoded-slash': {
      const slashes = [...path.matchAll(/\//g)].map((m) => m.index!);
      const at = dice.pick(slashes);
      path = `${path.slice(0, at)}${dice.pick(['%2F', '%2f', '%5C', '%252F'])}${path.slice(at + 1)}`;
      if (!path.startsWith('/')) path = `/${path}`;
      break;
    }
    case 'dot-segments':
      path = `${dice.pick(['/.', '/zz/..', '/%2e', '/x/%2E%2E', '/..'])}${path}`;
      break;
    case 'double-slash':
      path = path.replace(/\//g, (s) => (dice.chance(0.4) ? '//' : s));
      if (!path.includes('//')) path = `/${path}`;
      break;
  }
  let full = `${base}${path}`;
  if (mutation === 'odd-casing' && dice.chance(0.5)) full = full.replace(/^\/(admin|public)/, (m) => m.toUpperCase());

  const query = new URLSearchParams();
  for (const parameter of op.parameters.filter((p) => p.in === 'query')) {
    if (!parameter.required && !dice.chance(0.5)) continue;
    let value = String(instance(parameter.schema, dice, op.components));
    if (mutation === 'wrong-types') value = String(wrongType(value, dice));
    if (mutation === 'control-characters' && dice.chance(0.5)) value = withControl(value, dice);
    query.append(parameter.name, value);
  }
  if (mutation === 'long-query') query.append(dice.pick(['q', 'locale', 'pad', 'limit', 'token']), 'z'.repeat(1000 + dice.int(12_000)));
  if (mutation === 'control-characters' && dice.chance(0.3)) query.append('x', '\u0000\n');
  if ([...query.keys()].length > 0) full += `?${query.toString()}`;

  const built: Built = { method: op.method, path: full, headers };
  if (!['POST', 'PUT', 'PATCH'].includes(op.method) && mutation !== 'huge-body') return built;
  let body: unknown = op.body ? instance(op.body, dice, op.components) : {};
  if (mutation === 'wrong-types') body = spoilTypes(body, dice);
  let text = JSON.stringify(body) ?? 'null';
  if (mutation === 'control-characters') {
    // Escaped in strings (valid JSON whose values hold control characters), or raw in the text (not JSON).
    text = dice.chance(0.5) ? JSON.stringify(withControlStrings(body, dice)) ?? 'null' : withControl(text, dice);
  }
  if (mutation === 'deep-body') {
    const depth = 2000 + dice.int(20_000);
    text = dice.chance(0.5) ? `{"fields":${'['.repeat(depth)}${']'.repeat(depth)}}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  }
  if (mutation === 'huge-body') text = JSON.stringify({ ...(typeof body === 'object' && body !== null ? body : {}), pad: 'h'.repeat(1_100_000 + dice.int(2_000_000)) });
  headers['content-type'] = mutation === 'wrong-content-type' ? dice.pick(['text/plain', 'multipart/form-data', 'application/x-www-form-urlencoded', 'application/xml', 'image/png', 'application/json; charset=utf-16']) : 'application/json';
  built.body = text;
  if (mutation === 'bad-encoding') {
    headers['content-encoding'] = dice.pick(['gzip', 'deflate', 'br', 'GZIP', 'compress', 'gzip, br', 'x-gzip', 'identity, gzip']);
    built.body = dice.pick([Buffer.from(text), gzipSync(text).subarray(0, Math.max(1, dice.int(20))), Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xff, 0xff, 0xff])]);
  }
  return built;
}

function judge(op: Operation, status: number, headers: Record<string, unknown>, json: unknown): string | null {
  if (status >= 500 && status !== 503) return `${status}`;
  if (status === 503 && !isErrorEnvelope(json)) return '503 outside the envelope';
  if (status < 400) return null;
  const fromApplication = headers['x-request-id'] !== undefined || String(headers['content-type'] ?? '').includes('json');
  if (!fromApplication) return null;
  // The MCP endpoint speaks JSON-RPC (its errors are JSON-RPC error objects, as the MCP transport requires).
  if (op.template === '/mcp' && typeof json === 'object' && json !== null && (json as { jsonrpc?: unknown }).jsonrpc === '2.0') return null;
  if (!isErrorEnvelope(json)) return `error ${status} outside the envelope`;
  return null;
}

/** Runs the fuzzer against a started service; resolves the report (findings empty when nothing was found). */
export async function fuzz(target: FuzzTarget, options: FuzzOptions): Promise<FuzzReport> {
  const operations = await loadOperations(target.url);
  const report: FuzzReport = { seed: options.seed, operations: operations.length, requests: 0, byStatus: {}, byMutation: {}, serverErrors: 0, rateLimited: 0, undeclaredStatuses: 0, undeclaredBodies: 0, findings: [] };
  const concurrency = options.concurrency ?? 4;
  const pacer = new KeyPacer(target.agentKeys, options.agentKeyBudget ?? 149);
  const timeoutMs = options.timeoutMs ?? 15_000;
  let counter = 0;
  for (const op of operations) {
    const jobs = Array.from({ length: options.perOperation }, () => counter++);
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < jobs.length) {
          const request = jobs[next++]!;
          const dice = new Dice(rng(options.seed * 1_000_003 + request));
          const mutation = MUTATIONS[request % MUTATIONS.length]!;
          const built = await build(op, mutation, dice, target, pacer, request);
          report.requests += 1;
          report.byMutation[mutation] = (report.byMutation[mutation] ?? 0) + 1;
          let verdict: string | null;
          let status: Finding['status'];
          let excerpt = '';
          try {
            const response = await rawRequest(target.url, built.method, built.path, { headers: built.headers, ...(built.body === undefined ? {} : { body: built.body }), timeoutMs });
            status = response.status;
            excerpt = response.text.slice(0, 300);
            verdict = judge(op, response.status, response.headers as Record<string, unknown>, response.json);
            if (verdict === null) {
              // The check every end-to-end test runs on its answers: the status (and body) its operation declares.
              // A path refused before routing (not canonical) is no operation's answer, as for the tests' hook.
              const pathname = built.path.split('?')[0]!;
              const problem = nonCanonicalPathReason(pathname) === null ? await checkAnswer(target.url, built.method, pathname, { status: response.status, contentType: String(response.headers['content-type'] ?? ''), text: response.text }) : null;
              if (problem) {
                if (problem.kind === 'undeclared-status') report.undeclaredStatuses += 1;
                else report.undeclaredBodies += 1;
                verdict = problem.message.split('\n')[0]!;
              }
            }
          } catch (error) {
            const message = (error as Error).message;
            // The server may cut a connection that sends a body it refused (413 before the body is read): not a finding.
            if (/ECONNRESET|EPIPE|socket hang up/.test(message)) {
              status = 'error';
              verdict = null;
            } else {
              status = /no answer/.test(message) ? 'timeout' : 'error';
              verdict = message;
              excerpt = message;
            }
          }
          report.byStatus[String(status)] = (report.byStatus[String(status)] ?? 0) + 1;
          if (typeof status === 'number' && status >= 500 && status !== 503) report.serverErrors += 1;
          if (status === 429) report.rateLimited += 1;
          if (verdict !== null) {
            report.findings.push({ operation: `${op.api} ${op.operationId}`, mutation, method: built.method, path: built.path.slice(0, 300), status, excerpt: `${verdict}: ${excerpt}`, request });
          }
        }
      }),
    );
    options.progress?.(`${op.api} ${op.method} ${op.template}: ${options.perOperation} requests, ${report.findings.length} findings so far`);
  }
  return report;
}
