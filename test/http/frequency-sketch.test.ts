import { expect } from 'chai';
import { FrequencySketch } from '../../src/http/public/frequency-sketch.ts';

describe('frequency sketch (response cache admission)', () => {
  it('never estimates a key below how often it was added, and rarely above, among many keys', () => {
    const sketch = new FrequencySketch(1 << 12);
    const counts = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const key = `https://example.com/public/v1/form-sets/articles/entries/article-${i % 1000}${i % 7 === 0 ? '?locale=ja' : ''}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      sketch.add(key);
    }
    let over = 0;
    for (const [key, count] of counts) {
      const estimate = sketch.frequency(key);
      expect(estimate, key).to.be.at.least(count);
      if (estimate > count) over++;
    }
    expect(over / counts.size).to.be.below(0.05);
    expect(sketch.frequency('never added')).to.equal(0);
  });

  it('halves every count after ten additions per counter of a row, so old popularity fades', () => {
    const width = 16;
    const sketch = new FrequencySketch(width);
    for (let i = 0; i < 40; i++) sketch.add('popular');
    expect(sketch.frequency('popular')).to.equal(40);
    // 10 x width additions in all: the 160th halves everything.
    for (let i = 0; i < 10 * width - 41; i++) sketch.add(`other-${i % 3}`);
    expect(sketch.frequency('popular')).to.be.at.least(40);
    sketch.add('other-0');
    expect(sketch.frequency('popular')).to.be.within(20, 39);
  });

  it('saturates at 255 instead of wrapping, and refuses a width that is not a power of two', () => {
    const sketch = new FrequencySketch(1 << 10);
    for (let i = 0; i < 300; i++) sketch.add('hot');
    expect(sketch.frequency('hot')).to.equal(255);
    expect(() => new FrequencySketch(1000)).to.throw(RangeError);
  });
});
