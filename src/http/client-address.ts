import ipaddr from 'ipaddr.js';

/**
 * The key under which per-client limits count a client (connections, requests in progress, the load
 * shedder's heavy clients): an IPv4 address as it is (an IPv4-mapped IPv6 address as its IPv4 form), an IPv6
 * address as its /64 network, since one subscriber is given a whole /64 and could otherwise take a new
 * address for every connection. Anything unreadable counts as itself.
 */
export function clientKey(address: string | undefined): string {
  if (!address) return 'unknown';
  if (!ipaddr.isValid(address)) return address;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

/**
 * The client a request comes from: the socket's peer, or behind one trusted reverse proxy (TRUST_PROXY) the
 * last X-Forwarded-For entry, the one that proxy added (as Koa's ctx.ip with maxIpsCount 1); as clientKey.
 */
export function requestClient(remoteAddress: string | undefined, forwardedFor: string | string[] | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const list = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
    if (list.length > 0) return clientKey(list[list.length - 1]);
  }
  return clientKey(remoteAddress);
}
