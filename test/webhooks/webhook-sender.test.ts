import fs from 'node:fs';
import { expect } from 'chai';
import { outboundPolicy, type Resolver } from '../../src/security/ssrf-guard.ts';
import { WebhookSender } from '../../src/webhooks/webhook-sender.ts';
import { signatureHeader } from '../../src/webhooks/webhook-signature.ts';
import { Receiver } from './support.ts';

/** The sender alone against a real HTTPS receiver: certificate checks, the SSRF guard at delivery time (DNS rebinding), headers. */
describe('webhooks: the HTTPS sender', function () {
  this.timeout(30_000);
  let receiver: Receiver;
  let ca: string;
  const body = Buffer.from('{"event":"entry.published"}');
  const headers = { 'Content-Type': 'application/json', 'X-Service-Signature': signatureHeader('s', body) };
  before(async () => {
    receiver = await Receiver.start();
    ca = fs.readFileSync(receiver.caFile, 'utf8');
  });
  after(async () => {
    await receiver?.close();
  });

  it('verifies the receiver\'s certificate: without the extra CA the request fails with a TLS error and nothing arrives', async () => {
    const sender = new WebhookSender({ policy: outboundPolicy(['127.0.0.1']), timeoutMs: 5000 });
    try {
      const result = await sender.send(receiver.url('/untrusted'), body, headers);
      expect(result).to.include({ ok: false, status: null });
      expect(result.error).to.match(/^TLS error with 127\.0\.0\.1:\d+: .*\((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)$/);
      expect(receiver.received('/untrusted')).to.have.length(0);
    } finally {
      sender.close();
    }
  });

  it('trusts the extra CA added to the default roots, and sends the body and headers as given', async () => {
    const sender = new WebhookSender({ policy: outboundPolicy(['127.0.0.1']), timeoutMs: 5000, extraCa: ca });
    try {
      const result = await sender.send(receiver.url('/trusted?x=1'), body, headers);
      expect(result).to.include({ ok: true, status: 200, responseBody: 'ok', error: null });
      const [got] = receiver.received('/trusted');
      expect(got!.raw.equals(body)).to.equal(true);
      expect(got!.headers['content-length']).to.equal(String(body.length));
      expect(got!.headers['x-service-signature']).to.equal(headers['X-Service-Signature']);
    } finally {
      sender.close();
    }
  });

  it('refuses at delivery time an address the policy does not allow, before connecting', async () => {
    const sender = new WebhookSender({ policy: outboundPolicy([]), timeoutMs: 5000, extraCa: ca });
    try {
      const result = await sender.send(receiver.url('/guarded'), body, headers);
      expect(result).to.include({ ok: false, status: null });
      expect(result.error).to.match(/^refused by the SSRF guard: 127\.0\.0\.1 is a loopback address/);
      expect(receiver.received('/guarded')).to.have.length(0);
    } finally {
      sender.close();
    }
  });

  it('refuses a name that rebinds to loopback between the check and the connection (DNS rebinding)', async () => {
    let lookups = 0;
    const rebinding: Resolver = async () => [{ address: lookups++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    const sender = new WebhookSender({ policy: outboundPolicy([]), timeoutMs: 5000, extraCa: ca, resolve: rebinding });
    try {
      const result = await sender.send(`https://rebind.example:${receiver.port}/rebound`, body, headers);
      expect(lookups).to.equal(2);
      expect(result.error).to.match(/^refused by the SSRF guard: rebind\.example resolves to 127\.0\.0\.1, which is a loopback address/);
      expect(receiver.received('/rebound')).to.have.length(0);
    } finally {
      sender.close();
    }
  });

  it('connects to the checked address of an allowlisted host name, verifying the certificate for that name', async () => {
    const dns: Resolver = async (host) => (host === 'localhost' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const sender = new WebhookSender({ policy: outboundPolicy(['localhost']), timeoutMs: 5000, extraCa: ca, resolve: dns });
    try {
      const result = await sender.send(`https://localhost:${receiver.port}/named`, body, headers);
      expect(result).to.include({ ok: true, status: 200 });
      expect(receiver.received('/named')).to.have.length(1);
    } finally {
      sender.close();
    }
  });
});
