import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import {
  assertOutboundAllowed,
  forbiddenAddressReason,
  guardedLookup,
  OutboundRefusedError,
  outboundPolicy,
  type ResolvedAddress,
  type Resolver,
} from '../../src/security/ssrf-guard.ts';

const none = outboundPolicy([]);

/** A resolver answering from a table, as DNS would; unknown names fail like getaddrinfo does. */
function fakeDns(table: Record<string, string[]>): Resolver {
  return async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

async function refusal(promise: Promise<unknown>): Promise<OutboundRefusedError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(OutboundRefusedError);
    return error as OutboundRefusedError;
  }
  throw new Error('expected the request to be refused');
}

describe('SSRF guard', () => {
  const refusedLiterals: Array<[string, RegExp]> = [
    ['https://127.0.0.1/hook', /^127\.0\.0\.1 is a loopback address/],
    ['https://127.8.9.10/', /loopback/],
    ['https://10.1.2.3/', /^10\.1\.2\.3 is a private address/],
    ['https://172.16.0.1/', /private/],
    ['https://192.168.1.1/', /private/],
    ['https://169.254.169.254/latest/meta-data/', /^169\.254\.169\.254 is a cloud metadata address/],
    ['https://169.254.1.1/', /link-local/],
    ['https://100.100.100.200/', /cloud metadata/],
    ['https://100.64.0.1/', /carrier-grade NAT/],
    ['https://0.0.0.0/', /unspecified/],
    ['https://224.0.0.1/', /multicast/],
    ['https://255.255.255.255/', /broadcast/],
    ['https://[::1]/', /^::1 is a loopback address/],
    ['https://[::]/', /unspecified/],
    ['https://[fd12:3456::1]/', /private \(unique local\)/],
    ['https://[fe80::1]/', /link-local/],
    ['https://[fd00:ec2::254]/', /cloud metadata/],
    ['https://[ff02::1]/', /multicast/],
    ['https://[::ffff:127.0.0.1]/', /loopback address \(IPv4-mapped 127\.0\.0\.1\)/],
    ['https://[::ffff:a9fe:a9fe]/', /cloud metadata address \(IPv4-mapped 169\.254\.169\.254\)/],
    ['https://[64:ff9b::a00:1]/', /private address \(NAT64 10\.0\.0\.1\)/],
    // Issue 12 item 8: IPv4-translated addresses (::ffff:0:a.b.c.d, RFC 2765) were not classified at all.
    ['https://[::ffff:0:7f00:1]/', /loopback address \(IPv4-translated 127\.0\.0\.1\)/],
    ['https://[::ffff:0:a00:1]/', /private address \(IPv4-translated 10\.0\.0\.1\)/],
    ['https://[::ffff:0:808:808]/', /not a global unicast address|IPv4-translated/],
    // Nothing outside global unicast (2000::/3) is a public destination.
    ['https://[::ffff:1:0:7f00:1]/', /not a global unicast address/],
    ['https://[4000::1]/', /not a global unicast address/],
    ['https://[2002:7f00:1::]/', /loopback address \(6to4 127\.0\.0\.1\)/],
    // The WHATWG URL parser turns legacy IPv4 forms into dotted decimal before the guard sees them.
    ['https://0x7f.1/', /^127\.0\.0\.1 is a loopback address/],
    ['https://2130706433/', /^127\.0\.0\.1 is a loopback address/],
  ];
  for (const [url, message] of refusedLiterals) {
    it(`refuses ${url}`, async () => {
      const error = await refusal(assertOutboundAllowed(new URL(url), none, fakeDns({})));
      expect(error.message).to.match(message);
      expect(error.reason).to.equal('forbidden-address');
      expect(error.address).to.be.a('string');
    });
  }

  it('allows public addresses, literal or resolved, and returns what it checked', async () => {
    const dns = fakeDns({ 'hooks.example.com': ['93.184.216.34', '2606:2800:220:1::248'] });
    expect(await assertOutboundAllowed(new URL('https://hooks.example.com/x'), none, dns)).to.deep.equal([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::248', family: 6 },
    ]);
    expect(await assertOutboundAllowed(new URL('https://8.8.8.8/'), none, dns)).to.deep.equal([{ address: '8.8.8.8', family: 4 }]);
    expect(await assertOutboundAllowed(new URL('https://[2606:4700::1111]/'), none, dns)).to.deep.equal([{ address: '2606:4700::1111', family: 6 }]);
    expect(forbiddenAddressReason('1.1.1.1')).to.equal(null);
  });

  it('refuses a name when any of its addresses is forbidden, naming the name and the address', async () => {
    const dns = fakeDns({
      'internal.example.com': ['10.0.0.7'],
      'metadata.example.com': ['169.254.169.254'],
      'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
      'six.example.com': ['::ffff:10.1.1.1'],
    });
    const internal = await refusal(assertOutboundAllowed(new URL('https://internal.example.com/'), none, dns));
    expect(internal.message).to.match(/^internal\.example\.com resolves to 10\.0\.0\.7, which is a private address/);
    expect(internal.host).to.equal('internal.example.com');
    expect(internal.address).to.equal('10.0.0.7');
    expect((await refusal(assertOutboundAllowed(new URL('https://metadata.example.com/'), none, dns))).message).to.match(/cloud metadata/);
    expect((await refusal(assertOutboundAllowed(new URL('https://mixed.example.com/'), none, dns))).address).to.equal('127.0.0.1');
    expect((await refusal(assertOutboundAllowed(new URL('https://six.example.com/'), none, dns))).message).to.match(/IPv4-mapped 10\.1\.1\.1/);
  });

  it('refuses localhost through the system resolver', async () => {
    const error = await refusal(assertOutboundAllowed(new URL('https://localhost:8443/'), none));
    expect(error.message).to.match(/^localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/);
  });

  it('refuses a name that does not resolve, as unresolvable', async () => {
    const error = await refusal(assertOutboundAllowed(new URL('https://nowhere.invalid/'), none, fakeDns({})));
    expect(error.reason).to.equal('unresolvable');
    expect(error.message).to.equal('nowhere.invalid could not be resolved (ENOTFOUND)');
  });

  it('lets the allowlist permit named hosts (case-insensitive) and CIDR ranges, and nothing else', async () => {
    const dns = fakeDns({ 'receiver.lan': ['192.168.10.5'], 'other.lan': ['192.168.10.6'], 'ranged.lan': ['10.20.30.40'] });
    const policy = outboundPolicy(['Receiver.LAN', '10.20.0.0/16', 'fd00::/8', '127.0.0.1']);
    expect(await assertOutboundAllowed(new URL('https://receiver.lan/'), policy, dns)).to.deep.equal([{ address: '192.168.10.5', family: 4 }]);
    expect(await assertOutboundAllowed(new URL('https://RECEIVER.lan./'), policy, dns)).to.have.length(1);
    expect(await assertOutboundAllowed(new URL('https://ranged.lan/'), policy, dns)).to.have.length(1);
    expect(await assertOutboundAllowed(new URL('https://[fd00::5]/'), policy, dns)).to.have.length(1);
    expect(await assertOutboundAllowed(new URL('https://127.0.0.1/'), policy, dns)).to.have.length(1);
    expect(await assertOutboundAllowed(new URL('https://[::ffff:127.0.0.1]/'), policy, dns)).to.have.length(1);
    await refusal(assertOutboundAllowed(new URL('https://other.lan/'), policy, dns));
    await refusal(assertOutboundAllowed(new URL('https://127.0.0.2/'), policy, dns));
    await refusal(assertOutboundAllowed(new URL('https://10.21.0.1/'), policy, dns));
  });

  it('refuses a malformed allowlist entry, naming it', () => {
    expect(() => outboundPolicy(['localhost', '10.0.0.0/33'])).to.throw(/"10\.0\.0\.0\/33" is not valid: prefix length/);
    expect(() => outboundPolicy(['bad host'])).to.throw(/"bad host" is neither a host name nor/);
    expect(() => outboundPolicy(['300.1.1.1'])).to.throw(/"300\.1\.1\.1" is not valid/);
    expect(outboundPolicy([' ', 'a.example', '::1']).hosts.has('a.example')).to.equal(true);
  });

  describe('at connect time (guardedLookup)', () => {
    let server: http.Server;
    let port: number;
    let hits = 0;
    before(async () => {
      server = http.createServer((_req, res) => {
        hits++;
        res.end('ok');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    function get(host: string, lookup: ReturnType<typeof guardedLookup>): Promise<{ status?: number; error?: Error }> {
      return new Promise((resolve) => {
        const req = http.request({ host, port, path: '/', lookup }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode! }));
        });
        req.on('error', (error) => resolve({ error }));
        req.end();
      });
    }

    it('refuses a name that rebinds to loopback after it was checked, before any byte is sent', async () => {
      let calls = 0;
      const rebinding: Resolver = async () => [{ address: calls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
      await assertOutboundAllowed(new URL(`http://rebind.example:${port}/`), none, rebinding);
      const before = hits;
      const result = await get('rebind.example', guardedLookup(none, rebinding));
      expect(result.error).to.be.instanceOf(OutboundRefusedError);
      expect(result.error!.message).to.match(/^rebind\.example resolves to 127\.0\.0\.1, which is a loopback address/);
      expect(hits).to.equal(before);
    });

    it('connects to the address it checked when the policy allows it', async () => {
      const policy = outboundPolicy(['127.0.0.0/8']);
      const result = await get('receiver.example', guardedLookup(policy, fakeDns({ 'receiver.example': ['127.0.0.1'] })));
      expect(result.status).to.equal(200);
    });

    it('uses the system resolver by default', async () => {
      expect((await get('localhost', guardedLookup(none))).error).to.be.instanceOf(OutboundRefusedError);
      expect((await get('localhost', guardedLookup(outboundPolicy(['localhost'])))).status).to.equal(200);
    });
  });
});
