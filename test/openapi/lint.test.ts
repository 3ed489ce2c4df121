import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import { tempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const bin = (name: string) => path.join(PACKAGE_ROOT, 'node_modules', '.bin', name);
// No telemetry and no update check: CI has no network beyond the registries.
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
const APIS = ['admin', 'public'] as const;
type Api = (typeof APIS)[number];

interface Problem {
  /** The document's file. */
  file: string;
  rule: string;
  severity: string;
  message: string;
  where: string;
}

/** The CLI's stdout whether it exits 0 (nothing found) or 1 (problems found). */
async function stdoutOf(command: string, args: string[]): Promise<string> {
  return run(command, args, { env, maxBuffer: 64 * 1024 * 1024 }).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string; stderr?: string }) => {
      if (!error.stdout) throw new Error(`${path.basename(command)} failed: ${error.stderr ?? String(error)}`);
      return error.stdout;
    },
  );
}

/** Redocly's recommended rules on every file in one run: every problem, errors and warnings alike. */
async function redocly(files: string[]): Promise<Problem[]> {
  const stdout = await stdoutOf(bin('redocly'), ['lint', '--format=json', `--config=${path.join(PACKAGE_ROOT, 'redocly.yaml')}`, ...files]);
  // One pretty-printed report per file, one after the other (`}{` between them).
  const reports = stdout
    .slice(stdout.indexOf('{'))
    .split(/(?<=^\})(?=\{$)/m)
    .map((text) => JSON.parse(text) as { problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string; source: { ref: string } }> }> });
  return reports.flatMap((report) => report.problems).map((p) => ({ file: path.resolve(p.location[0]?.source.ref ?? ''), rule: p.ruleId, severity: p.severity, message: p.message, where: p.location[0]?.pointer ?? '' }));
}

/** Spectral's spectral:oas ruleset as .spectral.yaml sets it, on every file in one run: every problem, hints included. */
async function spectral(files: string[]): Promise<Problem[]> {
  const stdout = await stdoutOf(bin('spectral'), ['lint', '--format=json', '--quiet', `--ruleset=${path.join(PACKAGE_ROOT, '.spectral.yaml')}`, ...files]);
  const problems = JSON.parse(stdout.trim() === '' ? '[]' : stdout.slice(stdout.indexOf('['))) as Array<{ code: string; severity: number; message: string; path: string[]; source: string }>;
  return problems.map((p) => ({ file: path.resolve(p.source), rule: p.code, severity: ['error', 'warning', 'info', 'hint'][p.severity] ?? String(p.severity), message: p.message, where: p.path.join('.') }));
}

const show = (problems: Problem[]) => problems.slice(0, 20).map((p) => `${p.severity} ${p.rule}: ${p.message} at ${p.where}`).join('\n');

describe('OpenAPI documents: lint', function () {
  this.timeout(120_000);
  let f: AdminFixture;
  const files = {} as Record<Api, string>;
  const found = {} as Record<'redocly' | 'spectral', Problem[]>;
  let control: string;
  before(async () => {
    f = await startAdminFixture();
    const dir = tempDir();
    // The documents as the service serves them.
    for (const api of APIS) {
      files[api] = path.join(dir, `${api}.json`);
      writeFileSync(files[api], await (await fetch(`${f.service.url}/${api}/v1/openapi.json`)).text());
    }
    // A document with an operation that has neither description nor tag nor error answer: both tools must
    // find problems in it, so an empty finding on the served documents means they were linted.
    control = path.join(dir, 'control.json');
    writeFileSync(control, JSON.stringify({ openapi: '3.1.0', info: { title: 'control', version: '1' }, servers: [{ url: 'https://example.com' }], paths: { '/x': { get: { operationId: 'x', summary: 'X', responses: { '200': { description: 'ok' } } } } } }));
    // One run of each tool over every document.
    const all = [...Object.values(files), control];
    [found.redocly, found.spectral] = await Promise.all([redocly(all), spectral(all)]);
  });
  after(() => f.stop());

  /**
   * Redocly's operation-2xx-response, where an operation's only success is a redirect: the single sign-on starts
   * (OpenID Connect's and SAML's) and SAML's single logout are pages a browser is sent through (302), never an answer with a body. Only operations whose
   * document says they answer 302 are excused, and the test names them.
   */
  const redirectOnly = (api: Api, problem: Problem): boolean => {
    if (problem.rule !== 'operation-2xx-response') return false;
    const [, , pathPart, method] = problem.where.split('/');
    const document = JSON.parse(readFileSync(files[api], 'utf8')) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    return Boolean(document.paths[pathPart!.replace(/~1/g, '/').replace(/~0/g, '~')]?.[method!]?.responses['302']);
  };

  for (const api of APIS) {
    it(`the ${api} document: Redocly (recommended) finds nothing, neither errors nor warnings`, () => {
      const problems = found.redocly.filter((p) => p.file === files[api] && !redirectOnly(api, p));
      expect(problems, show(problems)).to.deep.equal([]);
      const excused = found.redocly.filter((p) => p.file === files[api] && redirectOnly(api, p)).map((p) => p.where);
      expect(excused).to.deep.equal(api === 'admin' ? ['#/paths/~1auth~1oidc~1start/get/responses', '#/paths/~1auth~1saml~1start/get/responses', '#/paths/~1auth~1saml~1slo~1{tenantId}/get/responses'] : []);
    });

    it(`the ${api} document: Spectral (spectral:oas) finds nothing, neither errors nor warnings`, () => {
      const problems = found.spectral.filter((p) => p.file === files[api]);
      expect(problems, show(problems)).to.deep.equal([]);
    });
  }

  it('both tools find the problems of a document that has them (the control), named by its file', () => {
    expect(found.redocly.filter((p) => p.file === control).map((p) => p.rule)).to.include('operation-4xx-response');
    expect(found.spectral.filter((p) => p.file === control).map((p) => p.rule)).to.include.members(['operation-description', 'operation-tags']);
  });
});
