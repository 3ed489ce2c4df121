import { expect } from 'chai';
import type { RecordedEvent } from '../../src/event-store/event-store.ts';
import { RecentEvents } from '../../src/projection-engine/recent-events.ts';

const event = (position: bigint): RecordedEvent => ({ id: `e${position}`, type: 'x', streamId: 's', revision: position, position, data: { position: Number(position) }, metadata: {} as RecordedEvent['metadata'] });

describe('RecentEvents: the events a projector folded last, in front of the log', () => {
  it('keeps nothing until the first read; then answers the events it folded without the log, and the rest from it', async () => {
    const asked: bigint[][] = [];
    const log = {
      readAt: async (positions: readonly bigint[]) => {
        asked.push([...positions]);
        return positions.map((p) => (p < 100n ? event(p) : null));
      },
    };
    const recent = new RecentEvents(log, 3);
    recent.folded(event(1n));
    expect((await recent.readAt([1n])).map((e) => e?.id)).to.deep.equal(['e1']);
    expect(asked).to.deep.equal([[1n]]);
    for (const p of [2n, 3n, 4n, 5n]) recent.folded(event(p));
    // Three kept (3, 4, 5): 2 was pushed out, 200 is in neither.
    const read = await recent.readAt([5n, 2n, 3n, 200n]);
    expect(read.map((e) => e?.id ?? null)).to.deep.equal(['e5', 'e2', 'e3', null]);
    expect(asked).to.deep.equal([[1n], [2n, 200n]]);
  });
});
