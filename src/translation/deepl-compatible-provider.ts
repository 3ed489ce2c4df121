import http from 'node:http';
import https from 'node:https';
import { z } from 'zod';
import { assertOutboundAllowed, guardedLookup, OutboundRefusedError, type OutboundPolicy, type Resolver } from '../security/ssrf-guard.ts';
import { TranslationProviderError, type TranslationProvider, type TranslationRequest } from './translation-provider.ts';

export interface DeepLCompatibleOptions {
  /** TRANSLATION_API_URL: http(s), e.g. https://api-free.deepl.com/v2/translate. */
  url: string;
  /** TRANSLATION_API_KEY: sent as `Authorization: DeepL-Auth-Key <key>` when set. */
  apiKey: string | undefined;
  /** OUTBOUND_ALLOWLIST, parsed: the provider's address is checked like any outbound request. */
  policy: OutboundPolicy;
  timeoutMs: number;
  /** Injected in tests; default the system resolver. */
  resolve?: Resolver;
}

/** DeepL's limits per request: 50 texts, 128 KiB of body; we stay below both. */
export const MAX_TEXTS_PER_REQUEST = 50;
export const MAX_REQUEST_TEXT_BYTES = 100_000;
/** A provider answer larger than this is refused (a translation is a few times its source at most). */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

const responseSchema = z.object({
  translations: z.array(z.object({ text: z.string() }).loose()),
});

/**
 * A translation provider speaking DeepL's v2 JSON API, which other services and self-hosted gateways
 * imitate:
 *
 *   POST <TRANSLATION_API_URL>
 *   Authorization: DeepL-Auth-Key <TRANSLATION_API_KEY>
 *   Content-Type: application/json
 *   {"text": ["Hello", ...], "source_lang": "EN", "target_lang": "JA", "tag_handling": "html"?}
 *   -> 200 {"translations": [{"text": "こんにちは"}, ...]}   (one per text, same order)
 *
 * Language codes are the locale codes in upper case; source_lang carries the language only (pt-BR -> PT),
 * target_lang the whole code (pt-BR -> PT-BR). Texts are sent in batches of at most MAX_TEXTS_PER_REQUEST
 * and about MAX_REQUEST_TEXT_BYTES. The URL passes the SSRF guard before connecting and at connect time;
 * redirects are not followed. Errors name the host only: the key, path and query never appear.
 */
export class DeepLCompatibleProvider implements TranslationProvider {
  readonly #url: URL;
  readonly #lookup;

  constructor(private readonly options: DeepLCompatibleOptions) {
    this.#url = new URL(options.url);
    if (this.#url.protocol !== 'https:' && this.#url.protocol !== 'http:') throw new Error('the translation provider URL must be http or https');
    this.#lookup = guardedLookup(options.policy, options.resolve);
  }

  async translate(request: TranslationRequest): Promise<string[]> {
    const results: string[] = [];
    for (const batch of batches(request.texts)) {
      const body = {
        text: batch,
        source_lang: sourceLanguage(request.sourceLocale),
        target_lang: targetLanguage(request.targetLocale),
        ...(request.html ? { tag_handling: 'html' } : {}),
      };
      const answer = await this.#post(JSON.stringify(body));
      const parsed = responseSchema.safeParse(answer);
      if (!parsed.success || parsed.data.translations.length !== batch.length) {
        throw new TranslationProviderError('invalid-response', `The translation provider at ${this.#where()} answered without one translation per text ({translations: [{text}]} expected).`);
      }
      results.push(...parsed.data.translations.map((t) => t.text));
    }
    return results;
  }

  #where(): string {
    return this.#url.host;
  }

  async #post(payload: string): Promise<unknown> {
    const url = this.#url;
    try {
      await assertOutboundAllowed(url, this.options.policy, this.options.resolve);
    } catch (error) {
      if (error instanceof OutboundRefusedError) throw new TranslationProviderError('refused', `The translation provider address was refused: ${error.message}.`);
      throw error;
    }
    const client = url.protocol === 'https:' ? https : http;
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'Content-Length': String(Buffer.byteLength(payload)),
      'User-Agent': 'annals-translation',
    };
    if (this.options.apiKey) headers['Authorization'] = `DeepL-Auth-Key ${this.options.apiKey}`;
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      const fail = (error: TranslationProviderError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.destroy();
        reject(error);
      };
      const request = client.request(
        {
          protocol: url.protocol,
          hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
          port: url.port || (url.protocol === 'https:' ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers,
          lookup: this.#lookup,
        },
        (response) => {
          const status = response.statusCode ?? 0;
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) return fail(new TranslationProviderError('invalid-response', `The translation provider at ${this.#where()} answered with more than ${MAX_RESPONSE_BYTES} bytes.`));
            chunks.push(chunk);
          });
          response.on('error', () => fail(new TranslationProviderError('unreachable', `The connection to the translation provider at ${this.#where()} broke.`)));
          response.on('end', () => {
            if (settled) return;
            if (status < 200 || status > 299) {
              return fail(new TranslationProviderError('rejected', `The translation provider at ${this.#where()} answered HTTP ${status}${describeStatus(status)}.`, status));
            }
            let json: unknown;
            try {
              json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              return fail(new TranslationProviderError('invalid-response', `The translation provider at ${this.#where()} answered with something other than JSON.`));
            }
            settled = true;
            clearTimeout(timer);
            resolve(json);
          });
        },
      );
      const timer = setTimeout(() => fail(new TranslationProviderError('timeout', `The translation provider at ${this.#where()} did not answer within ${this.options.timeoutMs} ms.`)), this.options.timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (error instanceof OutboundRefusedError) return fail(new TranslationProviderError('refused', `The translation provider address was refused: ${error.message}.`));
        fail(new TranslationProviderError('unreachable', `The translation provider at ${this.#where()} could not be reached${error.code ? ` (${error.code})` : ''}.`));
      });
      request.end(payload);
    });
  }
}

/** The texts cut into batches of at most MAX_TEXTS_PER_REQUEST texts and about MAX_REQUEST_TEXT_BYTES each (a longer text goes alone). */
export function batches(texts: readonly string[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const text of texts) {
    const size = Buffer.byteLength(text);
    if (current.length > 0 && (current.length >= MAX_TEXTS_PER_REQUEST || bytes + size > MAX_REQUEST_TEXT_BYTES)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(text);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** DeepL's source_lang: the language subtag in upper case (pt-BR -> PT). */
export function sourceLanguage(locale: string): string {
  return locale.split('-')[0]!.toUpperCase();
}

/** DeepL's target_lang: the whole code in upper case (pt-BR -> PT-BR, ja -> JA). */
export function targetLanguage(locale: string): string {
  return locale.toUpperCase();
}

function describeStatus(status: number): string {
  if (status === 401 || status === 403) return ': the API key was refused (check TRANSLATION_API_KEY)';
  if (status === 456) return ': the translation quota is used up';
  if (status === 429) return ': too many requests, try again later';
  if (status === 400) return ': the request was refused (is a language not supported?)';
  return '';
}
