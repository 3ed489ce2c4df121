import { expect } from 'chai';
import { StoredDocuments } from '../../src/projection-engine/write-batch.ts';

describe('projector: the documents it read and has not written since', () => {
  it('keeps the ones read last within its limit, hands out copies, and forgets what a commit wrote', () => {
    const stored = new StoredDocuments(2);
    stored.remember('form_sets', 'a', { name: 'A' });
    stored.remember('projects', 'b', null);
    expect(stored.get('form_sets', 'a')).to.deep.equal({ name: 'A' }); // a is now the last used
    stored.remember('entries', 'c', { n: 1 });
    expect(stored.get('projects', 'b')).to.equal(undefined); // the least recently used went
    expect(stored.get('form_sets', 'a')).to.deep.equal({ name: 'A' });
    const copy = stored.get('entries', 'c')!;
    copy['n'] = 2;
    expect(stored.get('entries', 'c')).to.deep.equal({ n: 1 });
    stored.forget([{ collection: 'entries', id: 'c', doc: { n: 3 }, position: 5n }]);
    expect(stored.get('entries', 'c')).to.equal(undefined);
  });
});
