import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { KeyStoreError, type KeyStore } from '../../src/key-store/key-store.ts';
import { conformanceSuite, type HarnessOrPending } from '../support/conformance.ts';

async function rejection(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

/**
 * A key store's harness tells every byte a store keeps that a reader of its storage can reach (`raw`): the
 * SQLite file and its WAL, every document of the MongoDB database. The suite checks that a destroyed key is
 * nowhere in them.
 */
export type KeyStoreHarness = HarnessOrPending<KeyStore> & { raw(store: KeyStore): Promise<Buffer> };

/** The key-store port's contract (src/key-store/key-store.ts): every adapter passes it. */
export function keyStoreConformance(title: string, harness: KeyStoreHarness): void {
  const { raw } = harness;
  conformanceSuite(title, harness, ({ test, harness: h }) => {
    test('keeps a key and gives it back; an unknown id has none', async () => {
      const store = await h().create();
      const id = randomUUID();
      const key = randomBytes(32);
      await store.put(id, key);
      expect((await store.get(id))?.equals(key)).to.equal(true);
      expect(await store.get(randomUUID())).to.equal(null);
      expect(await store.destroyed(randomUUID())).to.equal(false);
      await store.close();
    });

    test('putting the same key again is fine; another key for the same id is refused and the first stays', async () => {
      const store = await h().create();
      const id = randomUUID();
      const key = randomBytes(32);
      await store.put(id, key);
      await store.put(id, Buffer.from(key));
      const error = await rejection(() => store.put(id, randomBytes(32)));
      expect(error).to.be.instanceOf(KeyStoreError);
      expect(error.message).to.not.contain(key.toString('hex')).and.not.contain(key.toString('base64'));
      expect((await store.get(id))?.equals(key)).to.equal(true);
      await store.close();
    });

    test('refuses keys that are not 32 bytes', async () => {
      const store = await h().create();
      expect(await rejection(() => store.put(randomUUID(), randomBytes(16)))).to.be.instanceOf(KeyStoreError);
      await store.close();
    });

    test('destroys a key for good: gone, marked destroyed, idempotent, and the id can never take a key again', async () => {
      const store = await h().create();
      const id = randomUUID();
      const key = randomBytes(32);
      await store.put(id, key);
      await store.destroy(id);
      await store.destroy(id);
      expect(await store.get(id)).to.equal(null);
      expect(await store.destroyed(id)).to.equal(true);
      expect(await rejection(() => store.put(id, key))).to.be.instanceOf(KeyStoreError);
      expect(await store.get(id)).to.equal(null);
      // Destroying an id that never had a key leaves a tombstone too.
      const never = randomUUID();
      await store.destroy(never);
      expect(await store.destroyed(never)).to.equal(true);
      await store.close();
    });

    test('a destroyed key is gone from what the store keeps, not only from its answers', async () => {
      const store = await h().create();
      const kept = randomBytes(32);
      const erased = randomBytes(32);
      const [keptId, erasedId] = [randomUUID(), randomUUID()];
      await store.put(keptId, kept);
      await store.put(erasedId, erased);
      expect((await raw(store)).includes(erased), 'the stored bytes hold the key before it is destroyed').to.equal(true);
      await store.destroy(erasedId);
      const after = await raw(store);
      expect(after.includes(erased), 'the destroyed key is still stored').to.equal(false);
      expect(after.includes(kept)).to.equal(true);
      await store.close();
    });

    test('a put racing a destroy of the same id never leaves a key behind the tombstone', async () => {
      const store = await h().create();
      for (let i = 0; i < 20; i++) {
        const id = randomUUID();
        await Promise.allSettled([store.put(id, randomBytes(32)), store.destroy(id)]);
        expect(await store.destroyed(id)).to.equal(true);
        expect(await store.get(id), `round ${i}`).to.equal(null);
        expect((await store.getMany([id])).size).to.equal(0);
      }
      await store.close();
    });

    test('getMany returns the keys that exist, leaving out unknown and destroyed ids', async () => {
      const store = await h().create();
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      const keys = ids.map(() => randomBytes(32));
      for (let i = 0; i < ids.length; i++) await store.put(ids[i]!, keys[i]!);
      await store.destroy(ids[1]!);
      const found = await store.getMany([...ids, randomUUID(), ids[0]!]);
      expect([...found.keys()].sort()).to.deep.equal([ids[0]!, ids[2]!].sort());
      expect(found.get(ids[2]!)?.equals(keys[2]!)).to.equal(true);
      expect((await store.getMany([])).size).to.equal(0);
      await store.close();
    });

    test('keeps the first signing key stored under a name; a second one for the name is not stored and both callers get the first', async () => {
      const store = await h().create();
      const name = `audit-${randomUUID()}`;
      const record = (keyId: string) => ({ name, keyId, privateJwk: JSON.stringify({ d: randomBytes(32).toString('base64url') }), publicJwk: JSON.stringify({ x: keyId }), createdAt: '2026-11-24T10:00:00.000Z' });
      expect(await store.signingKey(name)).to.equal(null);
      const first = record('first');
      const [a, b] = await Promise.all([store.putSigningKey(first), store.putSigningKey(record('second'))]);
      expect(a).to.deep.equal(b);
      const kept = await store.signingKey(name);
      expect(kept).to.deep.equal(a);
      expect(await store.putSigningKey(record('third'))).to.deep.equal(kept);
      // Names are apart from submission keys: a submission key of the same id neither reads nor destroys it.
      await store.destroy(name);
      expect(await store.get(name)).to.equal(null);
      expect(await store.signingKey(name)).to.deep.equal(kept);
      expect(await store.signingKey(`other-${randomUUID()}`)).to.equal(null);
      await store.close();
    });

    test('answers ping while open', async () => {
      const store = await h().create();
      await store.ping();
      await store.close();
    });
  });
}
