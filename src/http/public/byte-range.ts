import { HttpError } from '../errors/http-error.ts';

/** What a Range request header asks of a representation of `size` bytes (RFC 9110 section 14). */
export type RangeRequest =
  /** No Range header, one in another unit, a malformed one, or several ranges: answer 200 with everything. */
  | { kind: 'whole' }
  /** One satisfiable range, inclusive offsets within the representation: answer 206. */
  | { kind: 'partial'; start: number; end: number }
  /** One range that lies wholly beyond the representation: answer 416. */
  | { kind: 'unsatisfiable' };

const BYTES_UNIT = /^\s*bytes\s*=\s*(.*)$/i;
const INT_RANGE = /^(\d+)-(\d*)$/;
const SUFFIX_RANGE = /^-(\d+)$/;

/**
 * Parses a Range header against a size. Only a single byte range is honoured: a request for several
 * (multipart/byteranges) is answered whole, which RFC 9110 allows a server to do. A last position beyond
 * the end is clamped; a suffix longer than the representation means all of it.
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined || header === '') return { kind: 'whole' };
  const unit = BYTES_UNIT.exec(header);
  if (!unit) return { kind: 'whole' };
  const specs = unit[1]!.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (specs.length !== 1) return { kind: 'whole' };
  const spec = specs[0]!;
  const int = INT_RANGE.exec(spec);
  if (int) {
    const start = toNumber(int[1]!);
    const end = int[2] === '' ? Infinity : toNumber(int[2]!);
    if (end < start) return { kind: 'whole' };
    if (start >= size) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start, end: Math.min(end, size - 1) };
  }
  const suffix = SUFFIX_RANGE.exec(spec);
  if (suffix) {
    const length = toNumber(suffix[1]!);
    if (length === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - length), end: size - 1 };
  }
  return { kind: 'whole' };
}

/** Digits as a number; beyond the safe range, Infinity (it is then beyond any file). */
function toNumber(digits: string): number {
  const value = Number(digits);
  return Number.isSafeInteger(value) ? value : Infinity;
}

/** The Content-Range header of a 206. */
export function contentRange(start: number, end: number, size: number): string {
  return `bytes ${start}-${end}/${size}`;
}

/** 416 in the error envelope, with the `Content-Range: bytes * /size` RFC 9110 asks for. */
export function rangeNotSatisfiable(size: number): HttpError {
  return new HttpError({
    status: 416,
    code: 'RANGE_NOT_SATISFIABLE',
    message: `The requested range lies beyond the ${size} bytes of this file.`,
    hint: `Ask for a range within bytes 0-${Math.max(0, size - 1)}.`,
    retryable: false,
    headers: { 'Content-Range': `bytes */${size}` },
  });
}
