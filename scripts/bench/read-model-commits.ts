/**
 * What a commit of the MongoDB read models costs now that it lands whole, against the commit it replaced.
 *
 *   npm run bench:commits -- [--docs 4,64] [--rounds 15] [--commits 20] [--json]
 *
 * The server is MONGODB_URL, else a container or FerretDB as the tests start one (test/support/mongo-server.ts).
 * For each batch size, rounds interleave (the order alternating) three ways of committing the same documents
 * (each rewriting the same ids, so that collections keep their size):
 * - `baseline`: what the adapter did before, which could land in part: each collection's puts as a bulk write
 *   guarded by position, then the checkpoint (two round trips and more, no journal);
 * - `journal`: MongoReadModelStore.commit through the journal (standalone servers, FerretDB), with the
 *   checkpoint expected as a projector commits;
 * - `transaction`: MongoReadModelStore.commit in a transaction, where the server has them (a replica set).
 * Prints the median milliseconds per commit of each, and the ratio to the baseline measured in the same run.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { MongoClient, type Db } from 'mongodb';
import { encodePosition } from '../../src/event-store/position.ts';
import { MongoReadModelStore, type CommitMode } from '../../src/read-models/mongo-read-model-store.ts';
import type { DocumentWrite, ReadModelSchema } from '../../src/read-models/read-model-store.ts';
import { mongoServer, stopMongoServer } from '../../test/support/mongo-server.ts';
import { median } from './support/percentile.ts';

const { values } = parseArgs({
  options: {
    docs: { type: 'string', default: '4,64' },
    rounds: { type: 'string', default: '15' },
    commits: { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
  },
});
const sizes = values.docs.split(',').map(Number);
const rounds = Number(values.rounds);
const commitsPerRound = Number(values.commits);
const say = (line: string) => process.stderr.write(`${line}\n`);

const NOW = '2026-12-01T00:00:00.000Z';
const schema: ReadModelSchema = {
  projection: 'bench-commits',
  collections: { views: { indexes: [{ name: 'by_list', fields: [['list', 1], ['rank', -1]] }] }, counts: {}, sites: {} },
};
const collections = Object.keys(schema.collections);

/** A batch as a live projection commits one: documents of about 1.5 KB spread over three collections. */
function batch(size: number, position: bigint): DocumentWrite[] {
  return Array.from({ length: size }, (_, i) => ({
    collection: collections[i % collections.length]!,
    id: `doc-${i}`,
    position,
    doc: { list: `list-${i % 7}`, rank: Number(position % 1000n) + i, title: `Entry ${i} at ${position}`, body: 'lorem ipsum '.repeat(120) },
  }));
}

/** The commit before this branch: a bulk write of guarded puts per collection, then the checkpoint. */
async function baselineCommit(db: Db, generation: number, writes: DocumentWrite[], checkpoint: bigint): Promise<void> {
  const byCollection = new Map<string, DocumentWrite[]>();
  for (const write of writes) byCollection.set(write.collection, [...(byCollection.get(write.collection) ?? []), write]);
  await Promise.all(
    [...byCollection].map(([collection, list]) =>
      db.collection(`rm.${schema.projection}.${collection}.g${generation}`).bulkWrite(
        list.map((w) => ({ replaceOne: { filter: { _id: w.id as never, _pos: { $lt: encodePosition(w.position) } }, replacement: { _pos: encodePosition(w.position), doc: w.doc }, upsert: true } })),
        { ordered: true },
      ),
    ),
  );
  const encoded = encodePosition(checkpoint);
  await db.collection('projection_generations').updateOne({ _id: `${schema.projection}:${generation}` as never, $or: [{ checkpoint: null }, { checkpoint: { $lt: encoded } }] }, { $set: { checkpoint: encoded, updatedAt: NOW } });
}

type Way = 'baseline' | CommitMode;

async function main(): Promise<void> {
  const server = await mongoServer();
  const client = await MongoClient.connect(server.url);
  const database = `annals_bench_commits_${randomUUID().slice(0, 8)}`;
  const db = client.db(database);
  const results: Array<{ docs: number; medianMs: Record<string, number>; ratio: Record<string, number> }> = [];
  try {
    const probe = new MongoReadModelStore(db);
    const ways: Way[] = ['baseline', 'journal', ...((await probe.commitMode()) === 'transaction' ? (['transaction'] as const) : [])];
    say(`server: ${server.flavour} at ${server.url.replace(/\/\/[^@]*@/, '//***@')}; ways: ${ways.join(', ')}`);
    const stores: Record<string, MongoReadModelStore> = {};
    const generations: Record<Way, number> = { baseline: 1, journal: 2, transaction: 3 };
    for (const way of ways) {
      stores[way] = new MongoReadModelStore(db, way === 'baseline' ? {} : { commitMode: way });
      await stores[way].createGeneration(schema, generations[way], 1, NOW);
    }
    let position = 0n;
    const last: Partial<Record<Way, bigint>> = {};
    for (const size of sizes) {
      const times: Record<string, number[]> = Object.fromEntries(ways.map((way) => [way, []]));
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? ways : [...ways].reverse();
        for (const way of order) {
          for (let i = 0; i < commitsPerRound; i++) {
            position += 1n;
            const writes = batch(size, position);
            const started = performance.now();
            if (way === 'baseline') await baselineCommit(db, generations.baseline, writes, position);
            // As a projector commits: from the checkpoint its batch was folded from.
            else await stores[way]!.commit({ projection: schema.projection, generation: generations[way] }, writes, position, NOW, { expectedCheckpoint: last[way] ?? null });
            last[way] = position;
            times[way]!.push(performance.now() - started);
          }
        }
      }
      const medianMs = Object.fromEntries(ways.map((way) => [way, Number(median(times[way]!).toFixed(2))]));
      const ratio = Object.fromEntries(ways.map((way) => [way, Number((medianMs[way]! / medianMs['baseline']!).toFixed(2))]));
      results.push({ docs: size, medianMs, ratio });
      say(`${String(size).padStart(4)} documents a commit: ${ways.map((way) => `${way} ${medianMs[way]} ms (x${ratio[way]})`).join(', ')}`);
    }
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
    await stopMongoServer();
  }
  if (values.json) process.stdout.write(`${JSON.stringify({ rounds, commitsPerRound, results })}\n`);
}

await main();
