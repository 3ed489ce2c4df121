import { expect } from 'chai';
import { StoredDocuments } from '../../src/projection-engine/write-batch.ts';

describe('projector: the documents it read and has not written since', () => {
  it('keeps what it read twice, the ones read last within its limit, hands out copies, and forgets what a commit wrote', () => {
    const stored = new StoredDocuments(2);
    const readTwice = (collection: string, id: string, doc: Record<string, unknown> | null) => {
      stored.remember(collection, id, doc);
      expect(stored.get(collection, id)).to.equal(undefined); // read once: not kept
      stored.remember(collection, id, doc);
    };
    readTwice('form_sets', 'a', { name: 'A' });
    readTwice('projects', 'b', null);
    expect(stored.get('projects', 'b')).to.equal(null);
    expect(stored.get('form_sets', 'a')).to.deep.equal({ name: 'A' }); // a is now the last used
    readTwice('entries', 'c', { n: 1 });
    expect(stored.get('projects', 'b')).to.equal(undefined); // the least recently used went
    expect(stored.get('form_sets', 'a')).to.deep.equal({ name: 'A' });
    const copy = stored.get('entries', 'c')!;
    copy['n'] = 2;
    expect(stored.get('entries', 'c')).to.deep.equal({ n: 1 });
    stored.forget([{ collection: 'entries', id: 'c', doc: { n: 3 }, position: 5n }]);
    expect(stored.get('entries', 'c')).to.equal(undefined);
    stored.remember('entries', 'c', { n: 3 }); // read once again since the write
    expect(stored.get('entries', 'c')).to.equal(undefined);
  });
});
