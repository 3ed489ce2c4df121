import { expect } from 'chai';
import { compileAllowlist, isAllowed, parseCidr, parseClientAddress } from '../../src/security/ip-allowlist.ts';

describe('IP allowlist', () => {
  describe('parseCidr', () => {
    const good: Array<[string, string, 'ipv4' | 'ipv6']> = [
      ['203.0.113.0/24', '203.0.113.0/24', 'ipv4'],
      ['203.0.113.77/24', '203.0.113.0/24', 'ipv4'],
      ['10.1.2.3/8', '10.0.0.0/8', 'ipv4'],
      [' 198.51.100.7 ', '198.51.100.7/32', 'ipv4'],
      ['0.0.0.0/0', '0.0.0.0/0', 'ipv4'],
      ['2001:DB8::/32', '2001:db8::/32', 'ipv6'],
      ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1/128', 'ipv6'],
      ['2001:db8:abcd:1234::1/48', '2001:db8:abcd::/48', 'ipv6'],
      ['::/0', '::/0', 'ipv6'],
      ['::ffff:192.0.2.0/120', '192.0.2.0/24', 'ipv4'],
      ['::ffff:192.0.2.9', '192.0.2.9/32', 'ipv4'],
    ];
    for (const [input, cidr, kind] of good) {
      it(`reads ${JSON.stringify(input)} as ${cidr}`, () => {
        expect(parseCidr(input)).to.deep.equal({ ok: true, cidr, kind });
      });
    }

    const bad = ['', 'example.com', '256.1.1.1', '10.0.0.0/33', '10.0.0.0/-1', '10.0.0.0/', '10.0.0.0/8/8', '127.1', '0x7f.0.0.1', '2001:db8::/129', '::ffff:10.0.0.0/64', 'fe80::1%eth0', '10.0.0.0/ 8'];
    for (const input of bad) {
      it(`refuses ${JSON.stringify(input)}`, () => {
        const result = parseCidr(input);
        expect(result.ok).to.equal(false);
        if (!result.ok) expect(result.reason).to.be.a('string').and.not.be.empty;
      });
    }
  });

  describe('isAllowed', () => {
    it('allows everyone when the list is empty', () => {
      expect(isAllowed('203.0.113.5', [])).to.equal(true);
      expect(isAllowed('2001:db8::1', [])).to.equal(true);
      expect(isAllowed('not an ip', [])).to.equal(true);
    });

    it('matches IPv4 ranges', () => {
      const entries = [{ cidr: '203.0.113.0/24' }, { cidr: '198.51.100.7/32' }];
      expect(isAllowed('203.0.113.0', entries)).to.equal(true);
      expect(isAllowed('203.0.113.255', entries)).to.equal(true);
      expect(isAllowed('203.0.114.1', entries)).to.equal(false);
      expect(isAllowed('198.51.100.7', entries)).to.equal(true);
      expect(isAllowed('198.51.100.8', entries)).to.equal(false);
    });

    it('matches IPv6 ranges and never mixes families', () => {
      const entries = [{ cidr: '2001:db8:abcd::/48' }];
      expect(isAllowed('2001:db8:abcd:ffff::1', entries)).to.equal(true);
      expect(isAllowed('2001:db8:abce::1', entries)).to.equal(false);
      expect(isAllowed('203.0.113.5', entries)).to.equal(false);
      expect(isAllowed('::1', [{ cidr: '0.0.0.0/0' }])).to.equal(false);
    });

    it('treats an IPv4-mapped IPv6 client as the IPv4 address it carries', () => {
      const entries = [{ cidr: '203.0.113.0/24' }];
      expect(isAllowed('::ffff:203.0.113.9', entries)).to.equal(true);
      expect(isAllowed('::ffff:cb00:7109', entries)).to.equal(true); // same address in hex
      expect(isAllowed('::ffff:203.0.114.9', entries)).to.equal(false);
      expect(isAllowed('203.0.113.9', [{ cidr: '::ffff:203.0.113.0/120' }])).to.equal(true);
    });

    it('refuses an unparseable client address when a list exists', () => {
      expect(isAllowed('', [{ cidr: '0.0.0.0/0' }])).to.equal(false);
      expect(isAllowed('garbage', [{ cidr: '0.0.0.0/0' }])).to.equal(false);
    });

    it('ignores stored entries that do not parse', () => {
      const allow = compileAllowlist([{ cidr: 'nonsense' }, { cidr: '10.0.0.0/8' }]);
      expect(allow('10.9.9.9')).to.equal(true);
      expect(allow('11.0.0.1')).to.equal(false);
    });
  });

  it('parses client addresses, unwrapping mapped IPv4', () => {
    expect(parseClientAddress('::ffff:10.0.0.1')?.kind()).to.equal('ipv4');
    expect(parseClientAddress('2001:db8::1')?.kind()).to.equal('ipv6');
    expect(parseClientAddress('nope')).to.equal(null);
  });
});
