import { expect } from 'chai';
import { StoredDocuments, documentKey } from '../../src/projection-engine/write-batch.ts';

describe('projector: the documents it read and has not written since', () => {
  it('keeps what it read twice, the ones read last within its limit, hands out copies, and knows what a commit wrote of what it read', () => {
    const stored = new StoredDocuments(2);
    const readTwice = (k: string, doc: Record<string, unknown> | null) => {
      stored.remember(k, doc);
      expect(stored.get(k)).to.equal(undefined); // read once: not kept
      stored.remember(k, doc);
    };
    const [a, b, c] = [documentKey('form_sets', 'a'), documentKey('projects', 'b'), documentKey('entries', 'c')];
    readTwice(a, { name: 'A' });
    readTwice(b, null);
    expect(stored.get(b)).to.equal(null);
    expect(stored.get(a)).to.deep.equal({ name: 'A' }); // a is now the last used
    readTwice(c, { n: 1 });
    expect(stored.get(b)).to.equal(undefined); // the least recently used went
    expect(stored.get(a)).to.deep.equal({ name: 'A' });
    const copy = stored.get(c)!;
    copy['n'] = 2;
    expect(stored.get(c)).to.deep.equal({ n: 1 });
    // A commit wrote c (read before: known as written) and d, e (never read: not kept); a deletion is known as none.
    const [d, e] = [documentKey('entries', 'd'), documentKey('entries', 'e')];
    stored.wrote([
      [c, { n: 4 }],
      [d, { n: 5 }],
      [e, null],
    ]);
    expect(stored.get(c)).to.deep.equal({ n: 4 });
    expect(stored.get(d)).to.equal(undefined);
    expect(stored.get(e)).to.equal(undefined);
    // Read once and written: the next read needs no store.
    stored.remember(d, { n: 5 });
    stored.wrote([[d, null]]);
    expect(stored.get(d)).to.equal(null);
    // Within the limit still: a, read least recently, went.
    expect(stored.get(a)).to.equal(undefined);
  });
});
