import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { EmlFileTransport, emlFileName } from '../../src/mail/eml-file-transport.ts';
import { tempDir } from '../support/temp-dir.ts';
import { mailTransportConformance, type MailHarness } from './mail-transport.conformance.ts';

async function readFolder(dir: string) {
  if (!fs.existsSync(dir)) return [];
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.eml')).sort();
  return Promise.all(files.map(async (f) => simpleParser(fs.readFileSync(path.join(dir, f)))));
}

mailTransportConformance('mail port: .eml files (embedded default)', {
  async create(): Promise<MailHarness> {
    const dir = path.join(tempDir(), 'mail');
    const transport = new EmlFileTransport(dir);
    return { transport, delivered: () => readFolder(dir), close: () => transport.close() };
  },
});

describe('mail port: .eml files, beyond the contract', () => {
  const msg = (messageId: string) => ({ messageId, from: 'a@example.com', to: ['b@example.com'], subject: 's', text: 't', date: new Date('2026-01-01T00:00:00Z') });

  it('writes each Message-ID once: the second send of the same message is a duplicate and writes nothing', async () => {
    const dir = path.join(tempDir(), 'mail');
    const transport = new EmlFileTransport(dir);
    const first = await transport.send(msg('<s1.notification@example.com>'));
    const again = await transport.send({ ...msg('<s1.notification@example.com>'), text: 'changed' });
    expect(first.duplicate).to.equal(false);
    expect(again.duplicate).to.equal(true);
    expect(fs.readdirSync(dir)).to.deep.equal(['s1.notification@example.com.eml']);
    expect(fs.readFileSync(path.join(dir, 's1.notification@example.com.eml'), 'utf8')).to.contain('\nt').and.not.contain('changed');
  });

  it('leaves no temporary file behind and discards stored copies on request', async () => {
    const dir = path.join(tempDir(), 'mail');
    const transport = new EmlFileTransport(dir);
    await transport.send(msg('<s2.autoreply@example.com>'));
    await transport.send(msg('<odd id with spaces@example.com>'));
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('.tmp'))).to.deep.equal([]);
    expect(emlFileName('<odd id with spaces@example.com>')).to.match(/^[0-9a-f]{64}\.eml$/);
    expect(fs.readdirSync(dir)).to.include(emlFileName('<odd id with spaces@example.com>'));
    await transport.discard(['<s2.autoreply@example.com>', '<never-sent@example.com>']);
    expect(fs.readdirSync(dir)).to.deep.equal([emlFileName('<odd id with spaces@example.com>')]);
  });

  it('fails with a message naming the folder when it cannot write', async () => {
    const file = path.join(tempDir(), 'not-a-folder');
    fs.writeFileSync(file, 'x');
    const transport = new EmlFileTransport(path.join(file, 'mail'));
    let error: Error | undefined;
    try {
      await transport.send(msg('<x@example.com>'));
    } catch (e) {
      error = e as Error;
    }
    expect(error?.name).to.equal('MailDeliveryError');
    expect(error?.message).to.contain(path.join(file, 'mail'));
  });
});
