import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { z } from 'zod';
import { ManualClock } from '../../src/clock.ts';
import { EventCatalog, EventValidationError, UnknownEventTypeError, UnsupportedSchemaVersionError, defineEvent } from '../../src/event-store/event-catalog.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { tempDir } from '../support/temp-dir.ts';

// A type whose shape changed twice: v1 {name}, v2 {title}, v3 {title, tags}.
const titled = defineEvent({
  type: 'note.titled',
  version: 3,
  schema: z.object({ title: z.string().min(1), tags: z.array(z.string()) }),
  upcasters: {
    1: (data) => ({ title: (data as { name: string }).name }),
    2: (data) => ({ ...(data as object), tags: [] }),
  },
});

describe('event log: catalog validation, metadata and upcasting', () => {
  let store: SqliteEventStore;
  let log: EventLog;
  const clock = new ManualClock('2026-11-22T09:08:07.006Z');
  beforeEach(() => {
    store = SqliteEventStore.open(path.join(tempDir(), 'events.sqlite'));
    log = new EventLog(store, new EventCatalog([titled]), clock);
  });
  afterEach(() => store.close());

  it('stamps id, time with milliseconds, schema version, actor, correlation and idempotency key', async () => {
    await log.append('n-1', [{ type: 'note.titled', data: { title: 'A', tags: ['x'], extra: 'dropped' } }], 'no_stream', {
      actor: { type: 'agent', id: 'key-123' },
      correlationId: 'corr-1',
      idempotencyKey: 'idem-1',
    });
    const [event] = await collect(log.readStream('n-1'));
    expect(event!.id).to.match(/^[0-9a-f-]{36}$/);
    expect(event!.data).to.deep.equal({ title: 'A', tags: ['x'] });
    // No per-stream link: the log's Merkle tree covers events off the write path (src/audit/log-tree-follower.ts).
    expect(event!.metadata).to.not.have.property('chain');
    expect(event!.metadata).to.deep.equal({
      actor: { type: 'agent', id: 'key-123' },
      correlationId: 'corr-1',
      causationId: null,
      idempotencyKey: 'idem-1',
      occurredAt: '2026-11-22T09:08:07.006Z',
      schemaVersion: 3,
    });
  });

  for (const chains of [false, true]) {
    it(`tells its listeners of every durable append, with its stream, types and position, before the append resolves (chains ${chains ? 'on' : 'off'}); a failed one is not told`, async () => {
      const chained = new EventLog(store, new EventCatalog([titled]), clock, { chains });
      const heard: Array<{ streamId: string; types: readonly string[]; position: bigint }> = [];
      const stop = chained.onAppended((append) => heard.push(append));
      const result = await chained.append('n-9', [{ type: 'note.titled', data: { title: 'A', tags: [] } }, { type: 'note.titled', data: { title: 'B', tags: [] } }], 'no_stream', { actor: { type: 'system', id: 'test' } });
      expect(heard).to.deep.equal([{ streamId: 'n-9', types: ['note.titled', 'note.titled'], position: result.position }]);
      await chained.append('n-9', [{ type: 'note.titled', data: { title: 'C', tags: [] } }], 'no_stream', { actor: { type: 'system', id: 'test' } }).catch(() => undefined);
      expect(heard).to.have.length(1);
      stop();
      await chained.append('n-9', [{ type: 'note.titled', data: { title: 'D', tags: [] } }], 'any', { actor: { type: 'system', id: 'test' } });
      expect(heard).to.have.length(1);
    });
  }

  it('rejects data that does not match the schema, naming the field, and appends nothing', async () => {
    const error = await log
      .append('n-2', [{ type: 'note.titled', data: { title: '', tags: 'nope' } }], 'any', { actor: { type: 'system', id: 'test' } })
      .then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(EventValidationError);
    expect((error as Error).message).to.match(/title/).and.match(/tags/);
    expect(await store.headPosition()).to.equal(null);
  });

  it('rejects an unregistered event type', async () => {
    const error = await log.append('n-3', [{ type: 'note.unknown', data: {} }], 'any', { actor: { type: 'system', id: 'test' } }).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(UnknownEventTypeError);
  });

  it('upcasts history written under versions 1 and 2 to the current shape on every read path', async () => {
    const old = (version: number, data: unknown) => ({
      id: randomUUID(),
      type: 'note.titled',
      data,
      metadata: { actor: { type: 'user' as const, id: 'u' }, correlationId: 'c', causationId: null, occurredAt: '2019-01-01T00:00:00.000Z', schemaVersion: version },
    });
    await store.append('n-4', [old(1, { name: 'From 2019' }), old(2, { title: 'From 2021' })], 'no_stream');
    const expected = [{ title: 'From 2019', tags: [] }, { title: 'From 2021', tags: [] }];
    expect((await collect(log.readStream('n-4'))).map((e) => e.data)).to.deep.equal(expected);
    expect((await collect(log.readAll())).map((e) => e.data)).to.deep.equal(expected);
    expect((await collect(log.readAll())).map((e) => e.metadata.schemaVersion)).to.deep.equal([3, 3]);
    const subscription = log.subscribeToAll();
    const seen: unknown[] = [];
    for await (const message of subscription) {
      if (message.kind === 'event') seen.push(message.event.data);
      if (seen.length === 2) break;
    }
    expect(seen).to.deep.equal(expected);
    // Every upcast result satisfies today's schema.
    for (const data of expected) expect(() => titled.schema.parse(data)).not.to.throw();
  });

  it('refuses to fold an event written by a newer build', () => {
    const catalog = new EventCatalog([titled]);
    const future = {
      id: randomUUID(), type: 'note.titled', streamId: 's', revision: 0n, position: 1n, data: {},
      metadata: { actor: { type: 'user' as const, id: 'u' }, correlationId: 'c', causationId: null, occurredAt: '2030-01-01T00:00:00.000Z', schemaVersion: 4 },
    };
    expect(() => catalog.upcast(future)).to.throw(UnsupportedSchemaVersionError, /newer than this build/);
  });

  it('requires an upcaster for every older version when a type is defined', () => {
    expect(() => defineEvent({ type: 'x.y', version: 2, schema: z.object({}) })).to.throw(/upcaster from version 1/);
  });
});
