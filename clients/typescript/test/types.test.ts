import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { PACKAGE_ROOT } from '../../../src/package-root.ts';
import { tempDir } from '../../../test/support/temp-dir.ts';

const run = promisify(execFile);

/**
 * What a user's project sees at compile time: a TypeScript program in its own folder, with @annals/client
 * installed as a package (its built dist/ and declarations), type-checked strictly. Each `@ts-expect-error`
 * below must meet an error and everything else must compile: were the client's types loose (`any`,
 * `unknown`, an open object), the unused expectations would fail the check.
 */
const CONSUMER = `import { AnnalsApiError, createAdminClient, createPublicClient, type AdminSchema } from '@annals/client';

const admin = createAdminClient({ serviceUrl: 'https://cms.example.com', agentKey: 'sk-agent-x' });

export async function workflow(formSetId: string): Promise<string> {
  const created = await admin.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug: 'hello', fields: { title: 'Hello' } } });
  const saved: AdminSchema<'SavedRevision'> = await admin.POST('/entries/{entryId}/revisions', { params: { path: { entryId: created.entry.id } }, body: { fields: { title: 'Hello again' } } });
  const approved = await admin.POST('/revisions/{revisionId}/approve', { params: { path: { revisionId: saved.id } }, body: { revision: saved.revision } });
  const status: 'draft' | 'pending_review' | 'scheduled' | 'published' | 'rejected' | 'superseded' = approved.status;
  return status;
}

export async function mistakes(formSetId: string): Promise<void> {
  // @ts-expect-error: a body field the operation does not take.
  await admin.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug: 'x', fields: {}, titel: 'typo' } });
  // @ts-expect-error: a required body field missing (fields).
  await admin.POST('/entries/{entryId}/revisions', { params: { path: { entryId: formSetId } }, body: {} });
  // @ts-expect-error: the path parameter missing.
  await admin.GET('/entries/{entryId}', {});
  // @ts-expect-error: a path the API does not have.
  await admin.GET('/entry/{entryId}');
  const list = await admin.GET('/form-sets');
  // @ts-expect-error: a field the answer does not have.
  list.items[0]?.title;
  // @ts-expect-error: a status the workflow does not have.
  const wrong: AdminSchema<'RevisionSummary'>['status'] = 'approved';
  void wrong;
  const site = createPublicClient({ serviceUrl: 'https://cms.example.com', projectId: '00000000-0000-4000-8000-000000000000' });
  const entry = await site.GET('/form-sets/{formSetSlug}/entries/{entrySlug}', { params: { path: { formSetSlug: 'news', entrySlug: 'hello' } } });
  // @ts-expect-error: a field the public answer does not have.
  entry.nonsense;
}

export function codeOf(error: unknown): string | undefined {
  return error instanceof AnnalsApiError ? (error.retryable ? \`\${error.code} (retry)\` : error.code) : undefined;
}
`;

describe('@annals/client: the types a user compiles against', function () {
  this.timeout(60_000);

  it('a strict TypeScript project using the installed package compiles, and every mistake in it is a compile error', async () => {
    const dir = tempDir('annals-client-consumer-');
    mkdirSync(path.join(dir, 'node_modules', '@annals'), { recursive: true });
    symlinkSync(path.join(PACKAGE_ROOT, 'clients', 'typescript'), path.join(dir, 'node_modules', '@annals', 'client'), 'dir');
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', lib: ['ES2022', 'DOM'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: [] }, include: ['consumer.ts'] }),
    );
    writeFileSync(path.join(dir, 'consumer.ts'), CONSUMER);
    const result = await run(path.join(PACKAGE_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', dir], { cwd: dir }).then(
      () => ({ code: 0, output: '' }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
    );
    expect(result, result.output).to.deep.equal({ code: 0, output: '' });
  });
});
