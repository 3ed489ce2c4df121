import { expect } from 'chai';
import { compareSqlValues, CountedBlocks, sortKeyOrder, type SortKey } from '../../src/read-models/counted-blocks.ts';
import { compareCodePoints } from '../../src/read-models/document-values.ts';

describe('counted blocks (positions in a sorted list)', () => {
  it('orders text as SQLite does, by UTF-8 bytes, not by UTF-16 code units', () => {
    const alphabet = ['a', 'Z', 'é', '\u0000', '\uD7FF', '\uE000', '\uFF5E', '\u{1F600}', '\u{10FFFF}', '語'];
    const strings: string[] = [''];
    for (let i = 0; i < 400; i++) strings.push(Array.from({ length: 1 + (i % 4) }, (_, k) => alphabet[(i * 7 + k * 3) % alphabet.length]).join(''));
    for (const a of strings) {
      for (const b of strings.slice(0, 60)) {
        expect(Math.sign(compareCodePoints(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).to.equal(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }
    }
  });

  it('ranks NULL before numbers before text, and numbers by value', () => {
    const sorted = ['b', 10, null, 'a', 2, -1.5].sort(compareSqlValues);
    expect(sorted).to.deep.equal([null, -1.5, 2, 10, 'a', 'b']);
  });

  it('finds the block of an offset, and keeps counting through adds, removes, splits and empty blocks', () => {
    const order = sortKeyOrder(['desc']);
    const key = (n: number): SortKey => ({ values: [n], id: `e${n}` });
    // 0..99 in descending order: blocks of 10.
    const blocks = CountedBlocks.fromSorted(order, Array.from({ length: 100 }, (_, i) => key(99 - i)), 10);
    expect(blocks.total).to.equal(100);
    expect(blocks.blockCount).to.equal(10);
    expect(blocks.locate(0)).to.deep.equal({ block: 0, after: undefined, skip: 0 });
    expect(blocks.locate(25)).to.deep.equal({ block: 2, after: key(80), skip: 5 });
    expect(blocks.locate(100)).to.equal(undefined);
    // 95.5 goes between 96 and 95, in block 0; a key equal to a block's start belongs to the block before it.
    expect(blocks.add({ values: [95.5], id: 'x' })).to.equal(0);
    expect(blocks.blockOf(key(80))).to.equal(1);
    expect(blocks.locate(25)).to.deep.equal({ block: 2, after: key(80), skip: 4 });
    // Block 0 now holds 11 keys (99..90 and 95.5): cut after its 6th.
    blocks.split(0, key(95), 6);
    expect(blocks.blockCount).to.equal(11);
    expect([blocks.count(0), blocks.count(1)]).to.deep.equal([6, 5]);
    expect(blocks.locate(6)).to.deep.equal({ block: 1, after: key(95), skip: 0 });
    // Emptying a block: it joins the one before; its keys' block is then that one.
    for (let n = 89; n >= 80; n--) blocks.remove(key(n));
    expect(blocks.dropIfEmpty(2)).to.equal(true);
    expect(blocks.blockOf(key(85))).to.equal(1);
    expect(blocks.total).to.equal(91);
    expect(blocks.locate(11)).to.deep.equal({ block: 2, after: key(80), skip: 0 });
    // A removal the counts cannot have seen added is refused (the store then drops the counts).
    expect(() => new CountedBlocks(order).remove(key(85))).to.throw(/empty block/);
  });

  it('locates every offset as a walk of the counts would, after each change (empty blocks, the first one too)', () => {
    const order = sortKeyOrder(['asc']);
    const key = (n: number): SortKey => ({ values: [n], id: `e${String(n).padStart(4, '0')}` });
    const blocks = CountedBlocks.fromSorted(order, Array.from({ length: 200 }, (_, i) => key(i * 2)), 8);
    const present = new Set(Array.from({ length: 200 }, (_, i) => i * 2));
    /** The block of an offset by walking the counts (skipping empty blocks), and how far into it. */
    const walked = (offset: number) => {
      let before = 0;
      for (let block = 0; block < blocks.blockCount; block++) {
        if (offset < before + blocks.count(block)) return { block, after: blocks.start(block), skip: offset - before };
        before += blocks.count(block);
      }
      return undefined;
    };
    let seed = 7;
    const random = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
    for (let step = 0; step < 300; step++) {
      const n = random(500);
      if (present.has(n)) {
        blocks.remove(key(n));
        present.delete(n);
        blocks.dropIfEmpty(blocks.blockOf(key(n)));
      } else {
        const block = blocks.add(key(n));
        present.add(n);
        if (blocks.count(block) > 16) blocks.split(block, key([...present].filter((k) => blocks.blockOf(key(k)) === block).sort((a, b) => a - b)[7]!), 8);
      }
      // Every key of the first block removed at some point: it stays, empty, and offsets skip it.
      if (step === 150) {
        for (const k of [...present].filter((k) => blocks.blockOf(key(k)) === 0)) {
          blocks.remove(key(k));
          present.delete(k);
        }
      }
      for (const offset of [0, 1, random(blocks.total + 1), blocks.total - 1, blocks.total]) expect(blocks.locate(offset), `step ${step}, offset ${offset}`).to.deep.equal(walked(offset));
    }
    expect(blocks.total).to.equal(present.size);
  });

  it("keeps each start's lead (keys of its first value at or before it) through adds, removes, cuts and empty blocks; blocks end on the first key of a value", () => {
    const order = sortKeyOrder(['desc', 'asc']);
    let seed = 11;
    const random = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
    // Values 0..29 as the first sort key (~20 keys each, some many more), a second one below it, then the id.
    const key = (n: number): SortKey => ({ values: [n % 30 < 3 ? 0 : n % 30, n % 7], id: `e${String(n).padStart(4, '0')}` });
    const present = new Set(Array.from({ length: 600 }, (_, i) => i));
    const sorted = () => [...present].map(key).sort(order);
    const blocks = CountedBlocks.fromSorted(order, sorted(), 8, 0);
    /** Each block's start and lead, as counted from the keys present; and each block's keys. */
    const expectLeads = (label: string) => {
      const keys = sorted();
      for (let block = 1; block < blocks.blockCount; block++) {
        const start = blocks.start(block)!;
        const lead = keys.filter((k) => k.values[0] === start.values[0] && order(k, start) <= 0).length;
        expect(blocks.lead(block), `${label}: block ${block} of ${blocks.blockCount}`).to.equal(lead);
      }
    };
    expectLeads('built');
    // Built: a block ends on the first key of a value once it holds 8 (lead 1), or at 15 keys (value 0 has ~60).
    for (let block = 1; block < blocks.blockCount; block++) expect(blocks.lead(block) === 1 || blocks.count(block - 1) === 15, `block ${block}`).to.equal(true);
    const keysOf = (block: number) => sorted().filter((k) => blocks.blockOf(k) === block);
    for (let step = 0; step < 400; step++) {
      const n = random(900);
      if (present.has(n)) {
        const block = blocks.remove(key(n));
        present.delete(n);
        blocks.dropIfEmpty(block);
      } else {
        const block = blocks.add(key(n));
        present.add(n);
        if (blocks.count(block) > 16) blocks.cut(block, keysOf(block), 8);
      }
      expectLeads(`step ${step}`);
    }
    expect(blocks.total).to.equal(present.size);
    // A block cut after changes ends on the first key of a value where one comes from its 8th key to its 15th.
    const cutOne = (values: number[]) => {
      const keys = values.map((v, i) => ({ values: [v, 0], id: `k${String(i).padStart(2, '0')}` }));
      const one = new CountedBlocks(order, 0);
      for (const k of keys) one.add(k);
      one.cut(0, keys, 8);
      return { counts: [one.count(0), one.count(1)], lead: one.lead(1) };
    };
    expect(cutOne([9, 9, 9, 9, 9, 8, 8, 8, 8, 8, 8, 7, 7, 7, 7, 7, 7])).to.deep.equal({ counts: [12, 5], lead: 1 });
    // None there: after the 8th, whose lead counts the keys of its value before it.
    expect(cutOne([9, 9, 9, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7])).to.deep.equal({ counts: [8, 9], lead: 5 });
    // A cut must be given the block's keys, all of them.
    const big = [...Array(blocks.blockCount).keys()].find((b) => blocks.count(b) > 1)!;
    expect(() => blocks.cut(big, keysOf(big).slice(1), 8)).to.throw(/cut from/);
  });

  it('keeps the lead of a start whose block before it, inside a run of its value, is emptied and dropped', () => {
    const order = sortKeyOrder(['asc']);
    // Values 0, 0, then twelve 1s, then three 2s; blocks of 4, ending on a value's first key or at 7 keys.
    const keys = [0, 0, ...Array(12).fill(1), 2, 2, 2].map((v, i): SortKey => ({ values: [v], id: `k${String(i).padStart(2, '0')}` }));
    const blocks = CountedBlocks.fromSorted(order, keys, 4, 0);
    expect([blocks.count(0), blocks.count(1), blocks.count(2)]).to.deep.equal([7, 7, 3]);
    expect([blocks.lead(1), blocks.lead(2)]).to.deep.equal([5, 12]);
    // Block 1 (k07 to k13, all 1s, k13 its end and block 2's start) emptied, then joined into block 0.
    for (const key of keys.slice(7, 14)) blocks.remove(key);
    expect(blocks.dropIfEmpty(1)).to.equal(true);
    expect(blocks.start(1)).to.deep.equal(keys[13]);
    // k02 to k06 have the value of that start and come before it.
    expect(blocks.lead(1)).to.equal(5);
    expect(blocks.lead(1, 4), 'over the most asked for').to.equal(undefined);
  });

  it('counts a change in the same time whether or not many starts share its value (one tail moves)', () => {
    const order = sortKeyOrder(['desc']);
    /** Time of 20,000 adds at the start of a list of 200,000 keys whose values are `value(i)`, ms. */
    const addsMs = (value: (i: number) => number) => {
      const blocks = CountedBlocks.fromSorted(order, Array.from({ length: 200_000 }, (_, i): SortKey => ({ values: [value(199_999 - i)], id: `k${String(199_999 - i).padStart(6, '0')}` })), 16, 0);
      const started = performance.now();
      for (let i = 0; i < 20_000; i++) blocks.add({ values: [value(200_000)], id: `n${String(i).padStart(6, '0')}` });
      return performance.now() - started;
    };
    const distinct = Math.min(addsMs((i) => i), addsMs((i) => i));
    // One value for all: ~12,500 starts of it after each key added.
    const oneValue = Math.min(addsMs(() => 1), addsMs(() => 1));
    expect(oneValue, `${oneValue.toFixed(1)} ms with one value, ${distinct.toFixed(1)} ms with distinct values`).to.be.below(distinct * 3 + 20);
  });

  it('finds a page right after a change in about the same time in a list of 100,000 as of 10,000 (no walk of every block)', () => {
    const order = sortKeyOrder(['desc']);
    /** µs per key added at the list's start followed by a page located ~5,000 in (a write, then a deep read). */
    const changeThenLocate = (n: number) => {
      const blocks = CountedBlocks.fromSorted(order, Array.from({ length: n }, (_, i): SortKey => ({ values: [Math.floor((n - 1 - i) / 21)], id: `k${String(n - 1 - i).padStart(7, '0')}` })), 16, 0);
      blocks.locate(0);
      const added = Array.from({ length: 5_000 }, (_, i): SortKey => ({ values: [1e9], id: `n${String(i).padStart(7, '0')}` }));
      let blocksFound = 0;
      const started = performance.now();
      for (const key of added) {
        blocks.add(key);
        blocksFound += blocks.locate(4_980)!.block;
      }
      const micros = ((performance.now() - started) * 1000) / 5_000;
      expect(blocksFound).to.be.greaterThan(0);
      return micros;
    };
    const small = Math.min(changeThenLocate(10_000), changeThenLocate(10_000));
    const large = Math.min(changeThenLocate(100_000), changeThenLocate(100_000));
    // Making every block's running sum again after each change took 8 times as long at 100,000 (24.8 against 2.9 µs).
    expect(large, `${large.toFixed(2)} µs at 100,000 keys, ${small.toFixed(2)} at 10,000`).to.be.below(small * 3 + 1);
  });

  it('keeps no leads without a tie index, and then cuts blocks every `size` keys as before', () => {
    const order = sortKeyOrder(['asc']);
    const blocks = CountedBlocks.fromSorted(order, Array.from({ length: 40 }, (_, i) => ({ values: [i >> 3], id: `e${String(i).padStart(2, '0')}` })), 5);
    expect(blocks.blockCount).to.equal(8);
    expect([...Array(8).keys()].map((b) => blocks.lead(b))).to.deep.equal(Array(8).fill(undefined));
  });
});
