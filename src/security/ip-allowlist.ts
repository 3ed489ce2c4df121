import ipaddr from 'ipaddr.js';

/**
 * The console login IP allowlist (spec section 8: Business plan and above): CIDR ranges, IPv4 and IPv6,
 * parsed with ipaddr.js.
 *
 * - A bare address is a single-host range (/32 or /128).
 * - IPv4-mapped IPv6 (::ffff:a.b.c.d), as a range or as a client address, is treated as the IPv4 it maps:
 *   a dual-stack socket reports IPv4 clients that way.
 * - Host bits after the prefix are cleared: 10.1.2.3/8 is stored as 10.0.0.0/8 (the range it matches).
 * - IPv4 must be written as four decimal parts; the legacy forms ipaddr.js also reads (0x7f.1, 127.1)
 *   are refused so what is stored is what the admin meant.
 * - An empty list allows every address; a non-empty list refuses an address it cannot parse.
 */
type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

export type CidrParseResult = { ok: true; cidr: string; kind: 'ipv4' | 'ipv6' } | { ok: false; reason: string };

/** Parses and canonicalises a CIDR (or a single address). */
export function parseCidr(input: string): CidrParseResult {
  const text = input.trim();
  if (text.length === 0 || text.length > 100) return { ok: false, reason: 'not an IPv4 or IPv6 address or CIDR range' };
  const slash = text.indexOf('/');
  const addressText = slash === -1 ? text : text.slice(0, slash);
  const prefixText = slash === -1 ? null : text.slice(slash + 1);
  if (addressText.includes('%')) return { ok: false, reason: 'zone identifiers are not allowed in an allowlist range' };

  let address: Address;
  if (ipaddr.IPv4.isValidFourPartDecimal(addressText)) address = ipaddr.IPv4.parse(addressText);
  else if (ipaddr.IPv6.isValid(addressText)) address = ipaddr.IPv6.parse(addressText);
  else return { ok: false, reason: `${JSON.stringify(addressText)} is not an IPv4 or IPv6 address` };

  const maxBits = address.kind() === 'ipv4' ? 32 : 128;
  let bits = maxBits;
  if (prefixText !== null) {
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > maxBits) {
      return { ok: false, reason: `prefix length must be a whole number from 0 to ${maxBits}` };
    }
    bits = Number(prefixText);
  }

  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    if (bits < 96) return { ok: false, reason: 'an IPv4-mapped range needs a prefix length of at least 96' };
    address = (address as ipaddr.IPv6).toIPv4Address();
    bits -= 96;
  }

  const network = networkAddress(address, bits);
  const kind = network.kind();
  const shown = kind === 'ipv6' ? (network as ipaddr.IPv6).toRFC5952String() : network.toString();
  return { ok: true, cidr: `${shown}/${bits}`, kind };
}

/** Parses a client address (as a socket or a trusted proxy reports it); null when it is not one. */
export function parseClientAddress(ip: string): Address | null {
  const text = ip.trim();
  if (!ipaddr.isValid(text)) return null;
  try {
    // process() turns IPv4-mapped IPv6 into IPv4.
    return ipaddr.process(text);
  } catch {
    return null;
  }
}

/** A matcher compiled once per list; ranges that do not parse are ignored (they match nothing). */
export function compileAllowlist(entries: ReadonlyArray<{ cidr: string }>): (ip: string) => boolean {
  if (entries.length === 0) return () => true;
  const ranges: Range[] = [];
  for (const entry of entries) {
    const parsed = parseCidr(entry.cidr);
    if (parsed.ok) ranges.push(ipaddr.parseCIDR(parsed.cidr));
  }
  return (ip: string) => {
    const address = parseClientAddress(ip);
    if (!address) return false;
    return ranges.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
  };
}

/** True when the address may reach the console under this allowlist; an empty list allows everyone. */
export function isAllowed(ip: string, entries: ReadonlyArray<{ cidr: string }>): boolean {
  return compileAllowlist(entries)(ip);
}

function networkAddress(address: Address, bits: number): Address {
  const bytes = address.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return ipaddr.fromByteArray(bytes);
}
