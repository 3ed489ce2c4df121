import { invalid } from '../domain-error.ts';
import { WEBHOOK_URL_MAX } from './webhook-events.ts';

/**
 * A webhook receiver's URL as the spec allows it (section 6, delivery rule 1): HTTPS only. Also refused:
 * credentials in the URL (they would be shown in the delivery history and logs; put a token in the path
 * or query instead, or verify the signature), a fragment (never sent), and anything the WHATWG parser
 * does not read as an absolute URL. Whether the host may be reached is the SSRF guard's decision
 * (src/security/ssrf-guard.ts), which needs DNS and so is not made here.
 */
export function parseWebhookUrl(text: string): URL {
  const trimmed = text.trim();
  if (trimmed.length === 0) throw invalid('url: must not be empty');
  if (trimmed.length > WEBHOOK_URL_MAX) throw invalid(`url: at most ${WEBHOOK_URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw invalid('url: not an absolute URL', 'Give the receiver\'s full address, e.g. https://hooks.example.com/annals.');
  }
  if (url.protocol === 'http:') throw invalid('url: http:// URLs are refused; webhooks are delivered over HTTPS only', 'Use an https:// URL.');
  if (url.protocol !== 'https:') throw invalid(`url: the ${url.protocol.replace(/:$/, '')} scheme is not allowed; webhooks are delivered over HTTPS only`);
  if (url.username !== '' || url.password !== '') throw invalid('url: must not contain a user name or password', 'Verify the X-Service-Signature header instead, or put a token in the path.');
  if (url.hash !== '' || trimmed.endsWith('#')) throw invalid('url: must not contain a fragment (#...)');
  if (url.hostname === '') throw invalid('url: has no host');
  if (url.href.length > WEBHOOK_URL_MAX) throw invalid(`url: at most ${WEBHOOK_URL_MAX} characters`);
  return url;
}
