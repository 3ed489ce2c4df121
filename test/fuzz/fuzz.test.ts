import { expect } from 'chai';
import { fuzz } from './fuzzer.ts';
import { startFuzzTarget } from './fuzz-target.ts';

/**
 * The short version of `npm run fuzz` (issue 12): every operation of both OpenAPI documents, 13 requests each
 * (one of each kind of spoiling), against a service process on the demo data. No 5xx, no request left
 * unanswered, no error outside the envelope.
 */
describe('fuzzing both APIs (short run; npm run fuzz for the long one)', function () {
  this.timeout(300_000);

  it('answers every spoiled request of every operation without a 5xx, in the error envelope', async () => {
    const { target, stop } = await startFuzzTarget();
    try {
      const report = await fuzz(target, { seed: 20261123, perOperation: 13 });
      expect(report.operations).to.be.greaterThan(100);
      expect(report.requests).to.equal(report.operations * 13);
      expect(Object.keys(report.byMutation)).to.have.length(13);
      expect(report.findings, JSON.stringify(report.findings.slice(0, 10), null, 1)).to.deep.equal([]);
      expect(report.serverErrors).to.equal(0);
      // Something was served too: the requests reached handlers, not only the refusals in front of them.
      expect(report.byStatus['200'] ?? 0).to.be.greaterThan(100);
    } finally {
      await stop();
    }
  });
});
