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
      if (step === 150) for (const k of [...present].filter((k) => blocks.blockOf(key(k)) === 0)) (blocks.remove(key(k)), present.delete(k));
      for (const offset of [0, 1, random(blocks.total + 1), blocks.total - 1, blocks.total]) expect(blocks.locate(offset), `step ${step}, offset ${offset}`).to.deep.equal(walked(offset));
    }
    expect(blocks.total).to.equal(present.size);
  });
});
