import type { TranslationConfig } from '../config/config.ts';
import { outboundPolicy } from '../security/ssrf-guard.ts';
import { DeepLCompatibleProvider } from './deepl-compatible-provider.ts';
import type { TranslationProvider } from './translation-provider.ts';

/** The configured provider (TRANSLATION_API_URL), or undefined when none is configured. */
export function translationProviderFor(config: { translation: TranslationConfig; outboundAllowlist: string[] }): TranslationProvider | undefined {
  const { apiUrl, apiKey, timeoutMs } = config.translation;
  if (!apiUrl) return undefined;
  return new DeepLCompatibleProvider({ url: apiUrl, apiKey, timeoutMs, policy: outboundPolicy(config.outboundAllowlist) });
}
