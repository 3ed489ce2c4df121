import type { Context } from 'koa';

/**
 * The address a request came from, for per-client limits. Behind a trusted reverse proxy (TRUST_PROXY) it
 * is the last X-Forwarded-For entry: the address the proxy itself saw, appended by it. The entries before it
 * were sent by the client and prove nothing (taking the first, as Koa's ctx.ip does, would let a client
 * pick a new address per request and never be limited). Without a trusted proxy: the socket's address.
 */
export function clientIp(ctx: Context, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = ctx.get('X-Forwarded-For');
    const last = forwarded.split(',').map((s) => s.trim()).filter(Boolean).pop();
    if (last) return normalise(last);
  }
  return normalise(ctx.req.socket.remoteAddress ?? 'unknown');
}

/** IPv4-mapped IPv6 (::ffff:1.2.3.4) as plain IPv4, so one client has one key. */
function normalise(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return (mapped ? mapped[1]! : address).toLowerCase();
}
