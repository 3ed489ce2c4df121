/**
 * Global positions are bigints in memory. Where they are stored or sent as text they are fixed-width,
 * zero-padded decimal strings, so that text order equals numeric order and JSON never sees a raw bigint.
 */
const WIDTH = 20; // 2^64 - 1 has 20 digits
const MAX = (1n << 64n) - 1n;

export function encodePosition(position: bigint): string {
  if (position < 0n || position > MAX) throw new RangeError(`position out of range: ${position}`);
  return position.toString().padStart(WIDTH, '0');
}

export function decodePosition(text: string): bigint {
  if (!/^\d{1,20}$/.test(text)) throw new RangeError(`not an encoded position: ${JSON.stringify(text)}`);
  const value = BigInt(text);
  if (value > MAX) throw new RangeError(`position out of range: ${text}`);
  return value;
}

export function encodeNullablePosition(position: bigint | null): string | null {
  return position === null ? null : encodePosition(position);
}

export function decodeNullablePosition(text: string | null | undefined): bigint | null {
  return text === null || text === undefined ? null : decodePosition(text);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
