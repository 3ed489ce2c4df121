import { createHmac, randomBytes } from 'node:crypto';

/** The X-Service-Signature value (spec section 6): sha256=<lowercase hex HMAC-SHA256 of the exact body bytes>, keyed with the signing secret. */
export function signatureHeader(secret: string, body: Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** A new signing secret: 32 random bytes, base64url, with a prefix that says what it is. Shown once, at creation. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
