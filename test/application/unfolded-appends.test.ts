import { expect } from 'chai';
import { HandledEvents } from '../../src/projection-engine/handled-events.ts';
import { UnfoldedAppends } from '../../src/application/unfolded-appends.ts';

const handled = new HandledEvents([
  { name: 'orders', filter: { streamPrefixes: ['order-'] } },
  { name: 'payments', filter: { eventTypes: ['order.paid'] } },
]);

describe('unfolded appends: what a write of this process waits for', () => {
  it('for each projection handling an append at or before the write, the last such append not yet folded', () => {
    const folded = new Map<string, bigint>();
    const appends = new UnfoldedAppends(handled, (name) => folded.get(name));
    appends.add({ streamId: 'order-1', types: ['order.placed'], position: 10n });
    appends.add({ streamId: 'order-1', types: ['order.placed', 'order.paid'], position: 12n });
    appends.add({ streamId: 'cart-1', types: ['cart.emptied'], position: 13n });
    appends.add({ streamId: 'order-2', types: ['order.placed'], position: 15n });
    expect(appends.size, 'an append nobody handles is not kept').to.equal(3);
    expect(Object.fromEntries(appends.targets(11n))).to.deep.equal({ orders: 10n });
    expect(Object.fromEntries(appends.targets(13n))).to.deep.equal({ orders: 12n, payments: 12n });
    expect(Object.fromEntries(appends.targets(20n))).to.deep.equal({ orders: 15n, payments: 12n });
    expect(Object.fromEntries(appends.targets(20n, ['payments']))).to.deep.equal({ payments: 12n });
    expect(appends.targets(9n).size, 'nothing of this process before the write').to.equal(0);
    // Folded appends are forgotten; what is left is still waited for.
    folded.set('orders', 12n);
    folded.set('payments', 12n);
    expect(Object.fromEntries(appends.targets(20n))).to.deep.equal({ orders: 15n });
    expect(appends.size).to.equal(1);
    folded.set('orders', 15n);
    expect(appends.targets(20n).size).to.equal(0);
    expect(appends.size).to.equal(0);
  });

  it('keeps at most its limit, dropping the oldest, and forgets what is folded as appends come without waits', () => {
    const folded = new Map<string, bigint>();
    const appends = new UnfoldedAppends(handled, (name) => folded.get(name), 100);
    for (let i = 1; i <= 150; i++) appends.add({ streamId: `order-${i}`, types: ['order.placed'], position: BigInt(i) });
    expect(appends.size).to.equal(100);
    expect(Object.fromEntries(appends.targets(60n))).to.deep.equal({ orders: 60n });
    folded.set('orders', 1000n);
    for (let i = 151; i <= 300; i++) appends.add({ streamId: `order-${i}`, types: ['order.placed'], position: BigInt(i) });
    // The 256th append looked for what is folded: everything before it was.
    expect(appends.size).to.equal(300 - 256);
  });
});
