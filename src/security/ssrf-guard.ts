import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { parseCidr } from './ip-allowlist.ts';

/**
 * The guard for every request the service makes to a URL someone else chose (webhook receivers, media
 * source URLs, chat notifications): server-side request forgery protection.
 *
 * A URL is refused when its host resolves (any A/AAAA record) to an address that is not on the public
 * internet: loopback, private (RFC 1918, fc00::/7), link-local, cloud metadata, unspecified, CGNAT,
 * multicast, broadcast, reserved, an IPv6 form that embeds one of those (IPv4-mapped, IPv4-translated,
 * IPv4-compatible, NAT64, 6to4), or any other IPv6 address outside global unicast (2000::/3). The OUTBOUND_ALLOWLIST setting permits named hosts (exact, case-insensitive) and CIDR
 * ranges, for receivers on a private network and for tests.
 *
 * The check runs twice: when the URL is accepted (assertOutboundAllowed) and when the connection is made
 * (guardedLookup as the `lookup` of http.request/https.request/net.connect), because a name may resolve
 * differently later (DNS rebinding); the socket connects to the address that the lookup checked.
 * Node does not call `lookup` for an IP-literal host, so callers check the URL with assertOutboundAllowed
 * before connecting as well.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

export type ResolvedAddress = { address: string; family: 4 | 6 };
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

/** A parsed allowlist: host names (exact, case-insensitive) and CIDR ranges (IPv4/IPv6). */
export interface OutboundPolicy {
  readonly hosts: ReadonlySet<string>;
  readonly ranges: readonly Range[];
}

/** Parses OUTBOUND_ALLOWLIST entries; throws on a malformed entry, naming it. */
export function outboundPolicy(allowlist: readonly string[]): OutboundPolicy {
  const hosts = new Set<string>();
  const ranges: Range[] = [];
  for (const raw of allowlist) {
    const entry = raw.trim();
    if (entry.length === 0) continue;
    if (looksLikeAddressOrRange(entry)) {
      const parsed = parseCidr(entry);
      if (!parsed.ok) throw new Error(`outbound allowlist entry ${JSON.stringify(entry)} is not valid: ${parsed.reason}`);
      ranges.push(ipaddr.parseCIDR(parsed.cidr));
      continue;
    }
    const host = normaliseHost(entry);
    if (!isHostName(host)) {
      throw new Error(`outbound allowlist entry ${JSON.stringify(entry)} is neither a host name nor an IPv4/IPv6 address or CIDR range`);
    }
    hosts.add(host);
  }
  return { hosts, ranges };
}

export type OutboundRefusalReason = 'forbidden-address' | 'unresolvable' | 'invalid-url';

/** The request was refused before any byte was sent; the message says why (no secrets in it: host and address only). */
export class OutboundRefusedError extends Error {
  readonly host: string;
  readonly address?: string;
  readonly reason: OutboundRefusalReason;

  constructor(message: string, host: string, reason: OutboundRefusalReason, address?: string) {
    super(message);
    this.name = 'OutboundRefusedError';
    this.host = host;
    this.reason = reason;
    if (address !== undefined) this.address = address;
  }
}

/** The system resolver (getaddrinfo, as http.request would use), every A and AAAA record. */
export const systemResolver: Resolver = async (host) => {
  const records = await dnsLookup(host, { all: true, verbatim: true });
  return records.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));
};

/**
 * Resolves the URL's host (all A/AAAA records) and refuses when any address is not publicly routable,
 * unless the host name or the address is allowed by the policy. Returns the checked addresses.
 */
export async function assertOutboundAllowed(url: URL, policy: OutboundPolicy, resolve: Resolver = systemResolver): Promise<ResolvedAddress[]> {
  const host = urlHost(url);
  if (host.length === 0) throw new OutboundRefusedError(`${url.protocol}// URL has no host`, host, 'invalid-url');
  return checkHost(host, policy, resolve);
}

/** A `lookup` for http.request/https.request/net.connect that applies the same rules at connect time (DNS rebinding). */
export function guardedLookup(policy: OutboundPolicy, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    checkHost(normaliseHost(hostname), policy, resolve).then(
      (addresses) => {
        const usable = wanted === 0 ? addresses : addresses.filter((a) => a.family === wanted);
        if (usable.length === 0) {
          const error: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${wanted} address`);
          error.code = 'ENOTFOUND';
          callback(error, '', undefined);
          return;
        }
        if (options.all) callback(null, usable.map((a) => ({ address: a.address, family: a.family })));
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', undefined),
    );
  };
}

/** Why an address may not be reached, or null when it is publicly routable. */
export function forbiddenAddressReason(address: string): string | null {
  let parsed: Address;
  try {
    parsed = ipaddr.parse(address.replace(/%.*$/, ''));
  } catch {
    return 'not a valid IP address';
  }
  return classify(parsed);
}

async function checkHost(host: string, policy: OutboundPolicy, resolve: Resolver): Promise<ResolvedAddress[]> {
  const hostAllowed = policy.hosts.has(host);
  const literal = literalAddress(host);
  let addresses: ResolvedAddress[];
  if (literal) {
    addresses = [literal];
  } else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new OutboundRefusedError(`${host} could not be resolved${code ? ` (${code})` : ''}`, host, 'unresolvable');
    }
    if (addresses.length === 0) throw new OutboundRefusedError(`${host} could not be resolved (no addresses)`, host, 'unresolvable');
  }
  if (hostAllowed) return addresses;
  for (const { address } of addresses) {
    let parsed: Address;
    try {
      parsed = ipaddr.parse(address.replace(/%.*$/, ''));
    } catch {
      throw new OutboundRefusedError(`${host} resolved to ${address}, which is not a valid IP address`, host, 'forbidden-address', address);
    }
    if (inPolicyRanges(parsed, policy)) continue;
    const reason = classify(parsed);
    if (reason !== null) {
      const subject = literal ? address : `${host} resolves to ${address}, which`;
      throw new OutboundRefusedError(`${subject} is ${reason}; outbound requests to it are refused (allow it with OUTBOUND_ALLOWLIST)`, host, 'forbidden-address', address);
    }
  }
  return addresses;
}

function inPolicyRanges(address: Address, policy: OutboundPolicy): boolean {
  const candidates: Address[] = [address];
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) candidates.push((address as ipaddr.IPv6).toIPv4Address());
  return candidates.some((candidate) => policy.ranges.some(([network, bits]) => network.kind() === candidate.kind() && candidate.match(network, bits)));
}

const v4 = (cidr: string): Range => ipaddr.IPv4.parseCIDR(cidr) as Range;
const v6 = (cidr: string): Range => ipaddr.IPv6.parseCIDR(cidr) as Range;

/** Checked in order: the first match names the reason (metadata before link-local and CGNAT). */
const IPV4_FORBIDDEN: Array<[Range, string]> = [
  [v4('169.254.169.254/32'), 'a cloud metadata address'],
  [v4('100.100.100.200/32'), 'a cloud metadata address'],
  [v4('0.0.0.0/8'), 'an unspecified address'],
  [v4('127.0.0.0/8'), 'a loopback address'],
  [v4('10.0.0.0/8'), 'a private address'],
  [v4('172.16.0.0/12'), 'a private address'],
  [v4('192.168.0.0/16'), 'a private address'],
  [v4('169.254.0.0/16'), 'a link-local address'],
  [v4('100.64.0.0/10'), 'a carrier-grade NAT address'],
  [v4('255.255.255.255/32'), 'the broadcast address'],
  [v4('224.0.0.0/4'), 'a multicast address'],
  [v4('240.0.0.0/4'), 'a reserved address'],
  [v4('192.0.0.0/24'), 'a reserved address'],
  [v4('192.0.2.0/24'), 'a reserved (documentation) address'],
  [v4('198.51.100.0/24'), 'a reserved (documentation) address'],
  [v4('203.0.113.0/24'), 'a reserved (documentation) address'],
  [v4('198.18.0.0/15'), 'a reserved (benchmarking) address'],
];

const IPV6_FORBIDDEN: Array<[Range, string]> = [
  [v6('fd00:ec2::254/128'), 'a cloud metadata address'],
  [v6('::/128'), 'an unspecified address'],
  [v6('::1/128'), 'a loopback address'],
  [v6('fc00::/7'), 'a private (unique local) address'],
  [v6('fe80::/10'), 'a link-local address'],
  [v6('fec0::/10'), 'a private (site-local) address'],
  [v6('ff00::/8'), 'a multicast address'],
  [v6('64:ff9b:1::/48'), 'a private (local-use NAT64) address'],
  [v6('100::/64'), 'a reserved (discard-only) address'],
  [v6('2001::/32'), 'a reserved (Teredo) address'],
  [v6('2001:db8::/32'), 'a reserved (documentation) address'],
];

/** Global unicast: the only IPv6 space with public destinations (besides forms that carry an IPv4 address). */
const GLOBAL_UNICAST = v6('2000::/3');

function classify(address: Address): string | null {
  if (address.kind() === 'ipv4') return matchTable(address, IPV4_FORBIDDEN);
  const ip6 = address as ipaddr.IPv6;
  const embedded = embeddedIPv4(ip6);
  if (embedded) {
    const described = `(${embedded.form} ${embedded.address.toString()})`;
    const inner = matchTable(embedded.address, IPV4_FORBIDDEN);
    if (inner !== null) return `${inner} ${described}`;
    // A translated address is an internal artefact of an IPv4/IPv6 translator, never a public destination.
    return embedded.form === 'IPv4-translated' ? `not a global unicast address ${described}` : null;
  }
  const listed = matchTable(ip6, IPV6_FORBIDDEN);
  if (listed !== null) return listed;
  return ip6.match(GLOBAL_UNICAST[0], GLOBAL_UNICAST[1]) ? null : 'not a global unicast address';
}

function matchTable(address: Address, table: Array<[Range, string]>): string | null {
  for (const [[network, bits], reason] of table) {
    if (network.kind() === address.kind() && address.match(network, bits)) return reason;
  }
  return null;
}

/** IPv6 forms that carry an IPv4 address the packet ends up at: mapped, translated, compatible, NAT64 well-known, 6to4. */
function embeddedIPv4(address: ipaddr.IPv6): { address: ipaddr.IPv4; form: string } | null {
  const bytes = address.toByteArray();
  const tail = (from: number) => new ipaddr.IPv4(bytes.slice(from, from + 4));
  if (address.isIPv4MappedAddress()) return { address: address.toIPv4Address(), form: 'IPv4-mapped' };
  // ::ffff:0:a.b.c.d (RFC 2765 SIIT), which stacks may route to the IPv4 address.
  if (address.match(ipaddr.IPv6.parse('::ffff:0:0:0'), 96)) return { address: tail(12), form: 'IPv4-translated' };
  if (address.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) return { address: tail(12), form: 'NAT64' };
  if (address.match(ipaddr.IPv6.parse('2002::'), 16)) return { address: tail(2), form: '6to4' };
  // IPv4-compatible (::a.b.c.d, deprecated); :: and ::1 are classified as IPv6 above this form.
  if (bytes.slice(0, 12).every((b) => b === 0) && !(bytes.slice(12, 15).every((b) => b === 0) && bytes[15]! <= 1)) {
    return { address: tail(12), form: 'IPv4-compatible' };
  }
  return null;
}

function literalAddress(host: string): ResolvedAddress | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return { address: host, family: 4 };
  if (host.includes(':') && ipaddr.IPv6.isValid(host.replace(/%.*$/, ''))) return { address: host, family: 6 };
  return null;
}

function urlHost(url: URL): string {
  return normaliseHost(url.hostname.replace(/^\[(.*)\]$/, '$1'));
}

function normaliseHost(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, '');
}

function looksLikeAddressOrRange(entry: string): boolean {
  return entry.includes('/') || entry.includes(':') || /^[\d.]+$/.test(entry);
}

function isHostName(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  return host.split('.').every((label) => /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/.test(label));
}
