import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeDeepLRequest {
  authorization: string | undefined;
  contentType: string | undefined;
  body: { text: string[]; source_lang: string; target_lang: string; tag_handling?: string };
}

/**
 * A DeepL-compatible translation endpoint on 127.0.0.1 for tests: POST /v2/translate with
 * {text, source_lang, target_lang} answers {translations: [{text}]}, each text "translated" as
 * `[<TARGET>] <text>` (for HTML, every text between tags gets the prefix, tags untouched). `mode`
 * makes it fail: an HTTP status, a malformed answer, or no answer at all.
 */
export interface FakeDeepL {
  url: string;
  requests: FakeDeepLRequest[];
  mode: 'ok' | 'status-500' | 'status-403' | 'malformed' | 'hang';
  close(): Promise<void>;
}

export async function startFakeDeepL(options: { key?: string } = {}): Promise<FakeDeepL> {
  const requests: FakeDeepLRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  const fake: FakeDeepL = {
    url: '',
    requests,
    mode: 'ok',
    close: () =>
      new Promise((resolve) => {
        for (const response of hanging) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as FakeDeepLRequest['body'];
      requests.push({ authorization: req.headers.authorization, contentType: req.headers['content-type'], body });
      const answer = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.method !== 'POST' || req.url !== '/v2/translate') return answer(404, { message: 'not found' });
      if (options.key !== undefined && req.headers.authorization !== `DeepL-Auth-Key ${options.key}`) return answer(403, { message: 'Wrong key' });
      switch (fake.mode) {
        case 'status-500':
          return answer(500, { message: 'Internal error' });
        case 'status-403':
          return answer(403, { message: 'Forbidden' });
        case 'malformed':
          return answer(200, { translations: [] });
        case 'hang':
          hanging.add(res);
          return;
      }
      const prefix = `[${body.target_lang}] `;
      const translate = (text: string) => (body.tag_handling === 'html' ? text.replace(/>([^<]+)</g, (_m, inner: string) => `>${prefix}${inner}<`) : `${prefix}${text}`);
      answer(200, { translations: body.text.map((text) => ({ detected_source_language: body.source_lang, text: translate(text) })) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/translate`;
  return fake;
}
