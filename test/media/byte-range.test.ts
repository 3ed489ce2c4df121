import { expect } from 'chai';
import { contentRange, parseRange, rangeNotSatisfiable } from '../../src/http/public/byte-range.ts';

describe('parseRange (RFC 9110 single byte ranges)', () => {
  const size = 1000;
  it('answers whole without a header, for another unit, for malformed or reversed ranges, and for several ranges', () => {
    for (const header of [undefined, '', 'items=0-5', 'bytes=abc', 'bytes=5-2', 'bytes=', 'bytes=1-2-3', 'bytes=0-1, 5-9', 'bytes= -', 'bytes=--5']) {
      expect(parseRange(header, size), String(header)).to.deep.equal({ kind: 'whole' });
    }
  });
  it('reads first-last, open-ended and suffix ranges, clamping the end', () => {
    expect(parseRange('bytes=0-0', size)).to.deep.equal({ kind: 'partial', start: 0, end: 0 });
    expect(parseRange('bytes=0-99', size)).to.deep.equal({ kind: 'partial', start: 0, end: 99 });
    expect(parseRange('bytes=900-', size)).to.deep.equal({ kind: 'partial', start: 900, end: 999 });
    expect(parseRange('bytes=990-5000', size)).to.deep.equal({ kind: 'partial', start: 990, end: 999 });
    expect(parseRange('bytes=-100', size)).to.deep.equal({ kind: 'partial', start: 900, end: 999 });
    expect(parseRange('bytes=-5000', size)).to.deep.equal({ kind: 'partial', start: 0, end: 999 });
    expect(parseRange('Bytes = 10-19 ', size)).to.deep.equal({ kind: 'partial', start: 10, end: 19 });
    expect(parseRange('bytes=0-99999999999999999999999', size)).to.deep.equal({ kind: 'partial', start: 0, end: 999 });
  });
  it('is unsatisfiable for a start at or beyond the end and for an empty suffix', () => {
    expect(parseRange('bytes=1000-', size)).to.deep.equal({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=1000-2000', size)).to.deep.equal({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=99999999999999999999-', size)).to.deep.equal({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-0', size)).to.deep.equal({ kind: 'unsatisfiable' });
  });
  it('formats Content-Range and the 416 error', () => {
    expect(contentRange(0, 99, 1000)).to.equal('bytes 0-99/1000');
    const error = rangeNotSatisfiable(1000);
    expect(error.status).to.equal(416);
    expect(error.code).to.equal('RANGE_NOT_SATISFIABLE');
    expect(error.headers['Content-Range']).to.equal('bytes */1000');
  });
});
