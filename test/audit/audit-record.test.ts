import { expect } from 'chai';
import { auditRecordId, positionOfAuditRecordId } from '../../src/audit/audit-record.ts';

describe('audit record ids: log positions in few characters that sort as the positions do', () => {
  it('sorts as the positions, round-trips, and is short', () => {
    const positions = [0n, 1n, 9n, 10n, 11n, 99n, 100n, 59_975n, 60_000n, 999_999n, 1_000_000n, 123_456_789_012n, (1n << 63n) - 1n, (1n << 64n) - 1n];
    for (let i = 0; i < 200; i++) positions.push(BigInt(Math.floor(Math.random() * 10 ** Math.floor(Math.random() * 15))));
    const byId = [...positions].sort((a, b) => (auditRecordId(a) < auditRecordId(b) ? -1 : auditRecordId(a) > auditRecordId(b) ? 1 : 0));
    expect(byId).to.deep.equal([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    for (const position of positions) expect(positionOfAuditRecordId(auditRecordId(position))).to.equal(position);
    expect(auditRecordId(60_000n)).to.equal('560000');
    expect(auditRecordId((1n << 64n) - 1n)).to.have.length(21);
  });

  it('refuses what is not an audit record id', () => {
    for (const id of ['', '5', '56000', '5600000', '00000000000000060000', 'x60000', '2-1', '201', 'l123456789012345678901']) {
      expect(() => positionOfAuditRecordId(id), id).to.throw(RangeError);
    }
    expect(() => auditRecordId(-1n)).to.throw(RangeError);
  });
});
