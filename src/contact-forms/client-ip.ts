import type { Context } from 'koa';

/**
 * The address a request came from, for per-client limits: Koa's ctx.ip. Behind a trusted reverse proxy
 * (TRUST_PROXY) the service's Koa app takes the last X-Forwarded-For entry (maxIpsCount 1), the address the
 * proxy itself saw; the entries before it were written by the client and prove nothing. Without a trusted
 * proxy it is the socket's address. IPv4-mapped IPv6 (::ffff:1.2.3.4) counts as plain IPv4, so one client
 * has one key.
 */
export function clientIp(ctx: Pick<Context, 'ip'>): string {
  const address = ctx.ip || 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return (mapped ? mapped[1]! : address).toLowerCase();
}
