import { expect } from 'chai';
import { outboundPolicy } from '../../src/security/ssrf-guard.ts';
import { DeepLCompatibleProvider } from '../../src/translation/deepl-compatible-provider.ts';
import { TranslationProviderError } from '../../src/translation/translation-provider.ts';
import { startFakeDeepL, type FakeDeepL } from './fake-deepl.ts';

describe('DeepL-compatible translation provider', () => {
  let fake: FakeDeepL;
  const KEY = 'test-key-9f2c:fx';
  const provider = (options: { allow?: string[]; timeoutMs?: number; key?: string } = {}) =>
    new DeepLCompatibleProvider({ url: fake.url, apiKey: options.key ?? KEY, policy: outboundPolicy(options.allow ?? ['127.0.0.1']), timeoutMs: options.timeoutMs ?? 5000 });

  before(async () => {
    fake = await startFakeDeepL({ key: KEY });
  });
  beforeEach(() => {
    fake.mode = 'ok';
    fake.requests.length = 0;
  });
  after(() => fake.close());

  it('posts the documented JSON with the key as DeepL-Auth-Key and returns one translation per text, in order', async () => {
    const result = await provider().translate({ texts: ['Hello', 'World'], sourceLocale: 'en', targetLocale: 'pt-BR', html: false });
    expect(result).to.deep.equal(['[PT-BR] Hello', '[PT-BR] World']);
    expect(fake.requests).to.have.length(1);
    expect(fake.requests[0]!.authorization).to.equal(`DeepL-Auth-Key ${KEY}`);
    expect(fake.requests[0]!.contentType).to.equal('application/json');
    expect(fake.requests[0]!.body).to.deep.equal({ text: ['Hello', 'World'], source_lang: 'EN', target_lang: 'PT-BR' });
  });

  it('asks for HTML handling for HTML texts, and sends more than 50 texts in several requests', async () => {
    const html = await provider().translate({ texts: ['<p>Hi <b>you</b></p>'], sourceLocale: 'en', targetLocale: 'ja', html: true });
    expect(html).to.deep.equal(['<p>[JA] Hi <b>[JA] you</b></p>']);
    expect(fake.requests[0]!.body.tag_handling).to.equal('html');
    fake.requests.length = 0;
    const texts = Array.from({ length: 75 }, (_, i) => `t${i}`);
    const many = await provider().translate({ texts, sourceLocale: 'en', targetLocale: 'ja', html: false });
    expect(many).to.deep.equal(texts.map((t) => `[JA] ${t}`));
    expect(fake.requests.map((r) => r.body.text.length)).to.deep.equal([50, 25]);
  });

  it('reports failures by kind, naming the host but never the key', async () => {
    const failure = async (p: DeepLCompatibleProvider): Promise<TranslationProviderError> => {
      try {
        await p.translate({ texts: ['x'], sourceLocale: 'en', targetLocale: 'ja', html: false });
      } catch (error) {
        expect(error).to.be.instanceOf(TranslationProviderError);
        expect((error as Error).message).not.to.include(KEY);
        return error as TranslationProviderError;
      }
      throw new Error('expected a failure');
    };
    const wrongKey = await failure(provider({ key: 'wrong' }));
    expect(wrongKey).to.include({ failure: 'rejected', status: 403 });
    expect(wrongKey.message).to.match(/HTTP 403: the API key was refused/);
    fake.mode = 'status-500';
    expect(await failure(provider())).to.include({ failure: 'rejected', status: 500 });
    fake.mode = 'malformed';
    expect((await failure(provider())).failure).to.equal('invalid-response');
    fake.mode = 'hang';
    const timeout = await failure(provider({ timeoutMs: 300 }));
    expect(timeout.failure).to.equal('timeout');
    expect(timeout.message).to.include('300 ms');
  });

  it('refuses a loopback provider that OUTBOUND_ALLOWLIST does not allow, before sending anything', async () => {
    const requestsBefore = fake.requests.length;
    try {
      await provider({ allow: [] }).translate({ texts: ['x'], sourceLocale: 'en', targetLocale: 'ja', html: false });
      expect.fail('expected a refusal');
    } catch (error) {
      expect(error).to.be.instanceOf(TranslationProviderError);
      expect((error as TranslationProviderError).failure).to.equal('refused');
      expect((error as Error).message).to.match(/loopback address/);
    }
    expect(fake.requests.length).to.equal(requestsBefore);
  });
});
