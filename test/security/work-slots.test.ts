import { expect } from 'chai';
import { SlotsFullError, WorkSlots } from '../../src/security/work-slots.ts';

describe('work slots: a bound on expensive tasks at once (issue 12 item 6)', () => {
  it('runs at most `concurrency` tasks at once, the others in order as slots free up', async () => {
    const slots = new WorkSlots({ concurrency: 2, maxQueued: 10 });
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const task = (i: number) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
      order.push(i);
      return i;
    };
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => slots.run(task(i))));
    expect(results).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(most).to.equal(2);
    expect(order.slice(2)).to.deep.equal([2, 3, 4, 5, 6, 7]);
    expect(slots.running).to.equal(0);
    expect(slots.queued).to.equal(0);
  });

  it('refuses a task at once when the queue is full, and frees the slot of a task that fails', async () => {
    const slots = new WorkSlots({ concurrency: 1, maxQueued: 1 });
    let release!: () => void;
    const first = slots.run(() => new Promise<void>((resolve) => (release = resolve)));
    const second = slots.run(async () => 'second');
    const third = await slots.run(async () => 'third').then(() => null, (e: unknown) => e);
    expect(third).to.be.instanceOf(SlotsFullError);
    expect((third as SlotsFullError).retryAfterSeconds).to.equal(1);
    release();
    await first;
    expect(await second).to.equal('second');
    const failing = await slots.run(async () => {
      throw new Error('boom');
    }).then(() => null, (e: unknown) => e);
    expect((failing as Error).message).to.equal('boom');
    expect(await slots.run(async () => 'after')).to.equal('after');
  });
});
