import net from 'node:net';
import { expect } from 'chai';
import { SmtpTransport } from '../../src/mail/smtp-transport.ts';
import { mailTransportConformance, type MailHarness } from './mail-transport.conformance.ts';
import { startSmtpPeer } from './smtp-peer.ts';

mailTransportConformance('mail port: SMTP (nodemailer) against a real SMTP server on loopback', {
  async create(): Promise<MailHarness> {
    const peer = await startSmtpPeer();
    const transport = new SmtpTransport({ url: peer.url });
    return {
      transport,
      delivered: async () => peer.messages.map((m) => m.parsed),
      close: async () => {
        await transport.close();
        await peer.close();
      },
    };
  },
});

describe('mail port: SMTP, beyond the contract', function () {
  this.timeout(30_000);
  const msg = { messageId: '<m1@example.com>', from: 'a@example.com', to: ['b@example.com'], subject: 's', text: 't', date: new Date() };

  it('logs in with the credentials of the URL, and a refused login never shows the password', async () => {
    const peer = await startSmtpPeer({ auth: { user: 'mailer', pass: 's3cr3t-Passw0rd' } });
    try {
      const good = new SmtpTransport({ url: peer.url });
      await good.send(msg);
      expect(peer.messages).to.have.length(1);
      await good.close();
      const bad = new SmtpTransport({ url: `smtp://mailer:wr0ng-Passw0rd@127.0.0.1:${peer.port}` });
      let error: Error | undefined;
      try {
        await bad.send(msg);
      } catch (e) {
        error = e as Error;
      }
      expect(error?.name).to.equal('MailDeliveryError');
      expect(error?.message).to.contain(`127.0.0.1:${peer.port}`).and.not.contain('wr0ng-Passw0rd');
      expect(bad.describe()).to.equal(`SMTP smtp://127.0.0.1:${peer.port}`);
      await bad.close();
    } finally {
      await peer.close();
    }
  });

  it('reports a server that cannot be reached, naming it, without the password', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const transport = new SmtpTransport({ url: `smtp://user:hunter2-secret@127.0.0.1:${port}`, timeoutsMs: { connection: 2000 } });
    let error: Error | undefined;
    try {
      await transport.verify();
    } catch (e) {
      error = e as Error;
    }
    expect(error?.message).to.match(/cannot be used/).and.contain(`127.0.0.1:${port}`).and.not.contain('hunter2-secret');
    await transport.close();
  });

  it('reports recipients the server refused, and delivers to the rest', async () => {
    const peer = await startSmtpPeer();
    try {
      peer.refuse.add('gone@example.com');
      const transport = new SmtpTransport({ url: peer.url });
      const receipt = await transport.send({ ...msg, to: ['b@example.com', 'gone@example.com'] });
      expect(receipt.accepted).to.deep.equal(['b@example.com']);
      expect(receipt.rejected).to.deep.equal(['gone@example.com']);
      expect(peer.messages[0]!.envelope.to).to.deep.equal(['b@example.com']);
      await transport.close();
    } finally {
      await peer.close();
    }
  });
});
