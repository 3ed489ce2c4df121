import { expect } from 'chai';
import { StoredDocuments, documentKey } from '../../src/projection-engine/write-batch.ts';

describe('projector: the documents it read and has not written since', () => {
  it('keeps what it read twice, the ones read last within its limit, hands out copies, and forgets what a commit wrote', () => {
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
    stored.forget([c]);
    expect(stored.get(c)).to.equal(undefined);
    stored.remember(c, { n: 3 }); // read once again since the write
    expect(stored.get(c)).to.equal(undefined);
  });
});
