/**
 * Seeds a data folder for bench:public: a project with two content locales (en, ja), the `articles` form set
 * and `--entries` published entries, written as events through the service (its read models are left
 * out: the service under test builds its own from the log, so another checkout can be measured on the same
 * data). A separate command, so that a large seed (100,000 entries take several minutes) is made once:
 *
 *   npm run bench:public:seed -- --entries 100000 --out /tmp/annals-seed-100k
 *   npm run bench:public -- --data /tmp/annals-seed-100k
 *
 * The folder gets `bench-seed.json`: the project id, the console login and every entry's id and slug.
 *
 * `--delete-every K` deletes every K-th entry after they are all published (a site removes content too;
 * a rebuild folds those deletions): they are left out of `entries`.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config/config.ts';
import { startService } from '../../src/service/service.ts';
import { AccessService } from '../../src/application/access-service.ts';
import { entryStream } from '../../src/domain/content/entry/entry-events.ts';

export interface BenchSeed {
  projectId: string;
  formSetId: string;
  adminEmail: string;
  adminPassword: string;
  entries: Array<{ entryId: string; slug: string }>;
}

const OPERATOR = { kind: 'operator' as const, operatorId: 'bench' };
const LOREM =
  'Public readers hit projected read models shaped at projection time, so that a request is a lookup and a little string formatting. ' +
  'Editors save revisions, reviewers approve them, and the scheduler publishes what was approved for later. ';

/** The field values of entry `i` (revision `revision`): localized title and body, a date and a number. */
export function articleFields(i: number, revision = 1): Record<string, unknown> {
  const day = new Date(Date.UTC(2020, 0, 1) + i * 3_600_000).toISOString().slice(0, 10);
  const suffix = revision === 1 ? `${i}` : `${i} (r${revision})`;
  return { title: { en: `Article ${suffix}`, ja: `記事 ${suffix}` }, body: { en: `${LOREM}${suffix}`, ja: `公開APIの記事です。${suffix}` }, published_date: day, rating: i % 5 };
}

export async function seedPublicBench(dataDir: string, count: number, say: (line: string) => void, options: { deleteEvery?: number } = {}): Promise<BenchSeed> {
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
  const service = await startService(config, { logger: pino({ level: 'silent' }), clock: systemClock });
  const adminEmail = 'bench@example.com';
  const adminPassword = 'correct horse battery staple';
  let seed: BenchSeed;
  try {
    const access = new AccessService({ log: service.log, clock: systemClock });
    const project = await access.bootstrap(OPERATOR, { projectName: 'Bench', plan: 'business', adminEmail, adminPassword, contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' } });
    await service.supervisor!.waitFor(project.position, 10_000);
    const response = await fetch(`${service.url}/admin/v1/form-sets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.agentKey.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        slug: 'articles',
        name: 'Articles',
        fields: [
          { key: 'title', type: 'text', label: 'Title', required: true },
          { key: 'body', type: 'textarea', label: 'Body' },
          { key: 'published_date', type: 'date', label: 'Date' },
          { key: 'rating', type: 'number', label: 'Rating' },
        ],
        widgetRoles: { title: 'title', date: 'published_date' },
      }),
    });
    const formSet = (await response.json()) as { id: string };
    if (response.status !== 201) throw new Error(`creating the form set: ${response.status} ${JSON.stringify(formSet)}`);
    seed = { projectId: project.projectId, formSetId: formSet.id, adminEmail, adminPassword, entries: [] };
    const scope = { projectId: project.projectId, formSetId: formSet.id };
    const context = { actor: { type: 'operator' as const, id: 'bench' } };
    for (let i = 0; i < count; i++) {
      const entryId = randomUUID();
      const revisionId = randomUUID();
      const slug = `article-${i}`;
      seed.entries.push({ entryId, slug });
      const now = new Date().toISOString();
      await service.log.append(
        entryStream(entryId),
        [
          { type: 'entry.created', data: { ...scope, entryId, slug } },
          { type: 'entry.revision-saved', data: { ...scope, entryId, revisionId, revision: 1, snapshot: articleFields(i), savedAt: now } },
          { type: 'entry.revision-submitted', data: { ...scope, entryId, revisionId, revision: 1 } },
          { type: 'entry.revision-published', data: { ...scope, entryId, revisionId, revision: 1, publishedAt: now, trigger: 'publish' } },
        ],
        'no_stream',
        context,
      );
      if (i % 5000 === 4999) say(`  ${i + 1} / ${count} entries`);
    }
    const deleteEvery = options.deleteEvery ?? 0;
    if (deleteEvery > 0) {
      const kept: BenchSeed['entries'] = [];
      for (const [i, entry] of seed.entries.entries()) {
        if ((i + 1) % deleteEvery !== 0) {
          kept.push(entry);
          continue;
        }
        await service.log.append(entryStream(entry.entryId), [{ type: 'entry.deleted', data: { ...scope, entryId: entry.entryId, slug: entry.slug, previousSlugs: [] } }], 'any', context);
      }
      say(`  ${seed.entries.length - kept.length} entries deleted`);
      seed.entries = kept;
    }
    const head = await service.stores.events.headPosition();
    if (!(await service.supervisor!.waitFor(head!, 3_600_000))) throw new Error('projections did not catch up');
  } finally {
    await service.stop();
  }
  // The service under test builds its read models from the log (and takes its own snapshots).
  for (const name of fs.readdirSync(dataDir)) if (/^(read-models|snapshots)\.sqlite/.test(name)) fs.rmSync(path.join(dataDir, name));
  fs.writeFileSync(path.join(dataDir, 'bench-seed.json'), JSON.stringify(seed));
  return seed;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { entries: { type: 'string', default: '100000' }, out: { type: 'string' }, 'delete-every': { type: 'string', default: '0' } } });
  if (!values.out) throw new Error('--out DIR is required');
  fs.mkdirSync(values.out, { recursive: true, mode: 0o700 });
  const started = performance.now();
  const seed = await seedPublicBench(path.resolve(values.out), Number(values.entries), (line) => process.stderr.write(`${line}\n`), { deleteEvery: Number(values['delete-every']) });
  process.stdout.write(`${JSON.stringify({ out: path.resolve(values.out), entries: seed.entries.length, seconds: Math.round((performance.now() - started) / 1000) })}\n`);
}
