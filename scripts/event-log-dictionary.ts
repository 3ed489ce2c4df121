/**
 * Makes a zstd dictionary for the embedded event log's frames (src/event-store/event-frames.ts) and writes it
 * as a TypeScript module beside them.
 *
 *   node --import tsx scripts/event-log-dictionary.ts --log SEED_DIR --id 32769 [--samples 6000]
 *
 * SEED_DIR holds an events.sqlite with the service's usual traffic (`npm run bench:public:seed` makes one:
 * entries created, saved, submitted, published and deleted, with review notices). The dictionary learns the
 * shape of events (keys, types, the metadata envelope, how ids and times are written), not anybody's content:
 * each sampled event's content (revision snapshots, slugs, titles, any long text) is replaced by random
 * words, and its ids, times and chain links by random ones of the same form, before training. Needs the `zstd`
 * command (Debian package `zstd`) for `zstd --train`.
 *
 * A dictionary is immutable once a log holds frames made with it: frames name their dictionary by id, and
 * reading them needs that dictionary forever. A new dictionary therefore gets a new id (zstd reserves ids below
 * 32768 for a registry; ours count up from 32769) and is added to the list in event-frames.ts beside the old
 * ones; frames are written with the newest.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SqliteEventStore } from '../src/event-store/sqlite-event-store.ts';

const { values } = parseArgs({
  options: {
    log: { type: 'string' },
    id: { type: 'string' },
    samples: { type: 'string', default: '6000' },
    size: { type: 'string', default: '32768' },
  },
});
if (!values.log || !values.id) {
  process.stderr.write('usage: node --import tsx scripts/event-log-dictionary.ts --log SEED_DIR --id N [--samples 6000] [--size 32768]\n');
  process.exit(2);
}
const id = Number(values.id);
if (!Number.isInteger(id) || id < 32768 || id >= 2 ** 31) throw new Error('--id: an integer from 32768 to 2^31 - 1 (zstd reserves the others)');
const wanted = Number(values.samples);

const WORDS = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua'.split(' ');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_INSIDE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const HEX = /^[0-9a-f]{64}$/;

function words(length: number): string {
  let text = '';
  while (text.length < length) text += `${text ? ' ' : ''}${WORDS[Math.floor(Math.random() * WORDS.length)]}${Math.random() < 0.1 ? Math.floor(Math.random() * 1000) : ''}`;
  return text.slice(0, Math.max(1, length));
}

/** The value with its content replaced: `content` marks a subtree that is all content (a revision snapshot). */
function scramble(value: unknown, content: boolean): unknown {
  if (typeof value === 'string') {
    if (UUID.test(value)) return randomUUID();
    if (TIME.test(value)) return new Date(Date.now() - Math.random() * 3e10).toISOString();
    if (HEX.test(value)) return randomBytes(32).toString('hex');
    if (content || (value.length > 24 && value.includes(' '))) return words(value.length);
    return value.replace(UUID_INSIDE, () => randomUUID());
  }
  if (Array.isArray(value)) return value.map((item) => scramble(item, content));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, key === 'slug' ? `post-${Math.floor(Math.random() * 1e5)}` : scramble(item, content || key === 'snapshot' || key === 'title')]),
    );
  }
  return value;
}

const store = SqliteEventStore.open(path.join(values.log, 'events.sqlite'));
const head = Number((await store.headPosition()) ?? 0n);
// A random sample (a regular stride would follow the seed's own rhythm of event types and miss some of them).
const share = Math.min(1, wanted / Math.max(1, head));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-dictionary-'));
let written = 0;
for await (const event of store.readAll()) {
  if (Math.random() >= share) continue;
  // A frame's text (event-frames.ts): the data's JSON, a newline, the metadata's.
  fs.writeFileSync(path.join(dir, String(written++)), `${JSON.stringify(scramble(event.data, false))}\n${JSON.stringify(scramble(event.metadata, false))}`);
}
await store.close();
const dictionaryFile = path.join(dir, 'dictionary');
execFileSync('zstd', ['--train', '-q', `--maxdict=${values.size}`, `--dictID=${id}`, '-o', dictionaryFile, ...fs.readdirSync(dir).filter((f) => f !== 'dictionary').map((f) => path.join(dir, f))], { stdio: 'inherit' });
const dictionary = fs.readFileSync(dictionaryFile);
fs.rmSync(dir, { recursive: true, force: true });

const out = path.join(import.meta.dirname, '..', 'src', 'event-store', `event-log-dictionary-${id}.ts`);
const base64 = dictionary.toString('base64');
const lines = base64.match(/.{1,120}/g) ?? [];
fs.writeFileSync(
  out,
  `/**
 * zstd dictionary ${id} of the embedded event log's frames (event-frames.ts): made by scripts/event-log-dictionary.ts from
 * ${written.toLocaleString('en')} events of a seeded log with their content, ids and times replaced by random ones. Never change it: frames
 * written with it need it to be read.
 */
export const EVENT_LOG_DICTIONARY_${id} = {
  id: ${id},
  base64:
${lines.map((line) => `    '${line}'`).join(' +\n')},
} as const;
`,
);
process.stdout.write(`${JSON.stringify({ id, bytes: dictionary.length, samples: written, module: path.relative(process.cwd(), out) })}\n`);
