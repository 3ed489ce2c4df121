import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';

/** The request's Content-Security-Policy nonce (one per request, made on first use). */
export function cspNonce(ctx: Context): string {
  const state = ctx.state as { cspNonce?: string };
  state.cspNonce ??= randomBytes(16).toString('base64');
  return state.cspNonce;
}

/**
 * Answers with an HTML page of the contact forms (hosted page, thank-you and error pages): strict CSP with the
 * request's nonce, no framing unless `embed` (then any site may frame it), never cached.
 */
export function sendHtmlPage(ctx: Context, status: number, html: string, embed: boolean): void {
  const nonce = cspNonce(ctx);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors ${embed ? '*' : "'none'"}`,
  );
  if (!embed) ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.body = ctx.method === 'HEAD' ? null : html;
  if (ctx.method === 'HEAD') ctx.length = Buffer.byteLength(html);
}
