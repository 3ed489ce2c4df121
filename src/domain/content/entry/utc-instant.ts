import { invalid } from '../../domain-error.ts';

/**
 * A point in time as a caller gives it (spec section 3 rule 3: entered in the client's local time zone,
 * stored as UTC): either an ISO 8601 date-time with an offset ("2026-12-01T09:00:00+09:00", "...Z"), or
 * a local date-time without offset plus an IANA time zone ({local: "2026-12-01T09:00", timeZone: "Asia/Tokyo"}).
 */
export type TimeInput = { at: string } | { local: string; timeZone: string };

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;
const WITH_OFFSET = /^(.*?)(Z|[+-]\d{2}:\d{2})$/i;

interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

/**
 * Converts a TimeInput to a UTC instant, ISO 8601 with milliseconds ("2026-12-01T00:00:00.000Z").
 * Pure: uses Intl's time-zone data, no clock. Throws VALIDATION_ERROR naming `field`.
 *
 * Local times in a daylight-saving change resolve as Temporal's "compatible" disambiguation (and
 * RFC 5545) do: a time that occurs twice (clocks go back) is the earlier of the two instants; a time
 * that never occurs (clocks go forward) is read with the offset before the change, which lands as
 * much later as the gap is long (Berlin 02:30 on the spring-forward day is 03:30 CEST).
 * Digits beyond milliseconds are truncated. Leap seconds (second 60) are refused.
 */
export function toUtcInstant(input: TimeInput, field = 'publishAt'): string {
  if (input === null || typeof input !== 'object') throw invalid(`${field} must be {at} or {local, timeZone}`);
  if ('at' in input) return fromOffsetDateTime(input.at, field);
  if ('local' in input && 'timeZone' in input) return fromLocal(input.local, input.timeZone, field);
  throw invalid(`${field} must be {at} or {local, timeZone}`);
}

function fromOffsetDateTime(at: unknown, field: string): string {
  if (typeof at !== 'string') throw invalid(`${field} must be an ISO 8601 date-time string`);
  const match = WITH_OFFSET.exec(at);
  if (!match || !DATE_TIME.test(match[1]!)) {
    if (DATE_TIME.test(at)) {
      throw invalid(`${field} "${at}" has no UTC offset`, 'Add an offset (Z or +09:00), or send {local, timeZone} with an IANA time zone.');
    }
    throw invalid(`${field} "${at}" is not an ISO 8601 date-time with an offset (YYYY-MM-DDTHH:mm[:ss[.sss]]Z or ±HH:MM)`);
  }
  const fields = parseFields(match[1]!, field, at);
  const offset = match[2]!.toUpperCase();
  let offsetMs = 0;
  if (offset !== 'Z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const hours = Number(offset.slice(1, 3));
    const minutes = Number(offset.slice(4, 6));
    if (hours > 23 || minutes > 59) throw invalid(`${field} "${at}" has an invalid offset ${offset}`);
    offsetMs = sign * (hours * 60 + minutes) * 60_000;
  }
  return iso(wallMs(fields) - offsetMs, field, at);
}

function fromLocal(local: unknown, timeZone: unknown, field: string): string {
  if (typeof local !== 'string') throw invalid(`${field}.local must be a date-time string`);
  if (typeof timeZone !== 'string' || timeZone.length === 0) throw invalid(`${field}.timeZone must be an IANA time zone name such as Asia/Tokyo`);
  if (!DATE_TIME.test(local)) {
    throw invalid(`${field}.local "${local}" must be a local date-time without offset (YYYY-MM-DDTHH:mm[:ss[.sss]])`);
  }
  const format = zoneFormat(timeZone);
  if (!format) throw invalid(`${field}.timeZone "${timeZone}" is not a known IANA time zone`, 'Use a name such as Europe/Berlin or Asia/Tokyo.');
  const wall = wallMs(parseFields(local, field, local));
  const offsetAt = (utc: number): number => zoneOffsetMs(format, utc);
  // The offsets in force a day either side bracket any single transition near this wall time.
  const before = offsetAt(wall - 86_400_000);
  const after = offsetAt(wall + 86_400_000);
  const candidates = [...new Set([wall - before, wall - after])].filter((utc) => utc + offsetAt(utc) === wall).sort((a, b) => a - b);
  // Ambiguous (two candidates): the earlier. Skipped (none): the offset before the gap.
  const utc = candidates[0] ?? wall - before;
  return iso(utc, field, local);
}

/** One formatter per zone (building one is costly); null for a name Intl does not know. */
const formats = new Map<string, Intl.DateTimeFormat | null>();

function zoneFormat(timeZone: string): Intl.DateTimeFormat | null {
  if (!formats.has(timeZone)) {
    let format: Intl.DateTimeFormat | null = null;
    try {
      format = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        era: 'short',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      format = null;
    }
    if (formats.size >= 1000) formats.clear();
    formats.set(timeZone, format);
  }
  return formats.get(timeZone)!;
}

/** Offset of the zone at a UTC instant, in ms (east of UTC positive), at whole-second resolution. */
function zoneOffsetMs(format: Intl.DateTimeFormat, utc: number): number {
  const seconds = Math.floor(utc / 1000) * 1000;
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(new Date(seconds))) parts[part.type] = part.value;
  let year = Number(parts.year);
  if (parts.era === 'BC' || parts.era === 'B') year = 1 - year;
  const local = utcFromFields({
    year,
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    millisecond: 0,
  });
  return local - seconds;
}

function parseFields(text: string, field: string, original: string): Fields {
  const m = DATE_TIME.exec(text);
  if (!m) throw invalid(`${field} "${original}" is not an ISO 8601 date-time`);
  const fields: Fields = {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4]),
    minute: Number(m[5]),
    second: m[6] === undefined ? 0 : Number(m[6]),
    millisecond: m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3)),
  };
  const daysInMonth = fields.month >= 1 && fields.month <= 12 ? new Date(Date.UTC(2000, fields.month, 0)).getUTCDate() : 0;
  const leapAdjusted = fields.month === 2 && fields.day === 29 && !isLeapYear(fields.year) ? 0 : daysInMonth;
  if (fields.month < 1 || fields.month > 12) throw invalid(`${field} "${original}" has month ${m[2]}, outside 01-12`);
  if (fields.day < 1 || fields.day > leapAdjusted) throw invalid(`${field} "${original}" has day ${m[3]}, which month ${m[2]} of ${m[1]} does not have`);
  if (fields.hour > 23) throw invalid(`${field} "${original}" has hour ${m[4]}, outside 00-23`);
  if (fields.minute > 59) throw invalid(`${field} "${original}" has minute ${m[5]}, outside 00-59`);
  if (fields.second > 59) throw invalid(`${field} "${original}" has second ${m[6]}, outside 00-59`);
  return fields;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** The fields read as if they were UTC (Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not). */
function utcFromFields(f: Fields): number {
  const date = new Date(0);
  date.setUTCFullYear(f.year, f.month - 1, f.day);
  date.setUTCHours(f.hour, f.minute, f.second, f.millisecond);
  return date.getTime();
}

const wallMs = utcFromFields;

function iso(utc: number, field: string, original: string): string {
  const date = new Date(utc);
  const year = date.getUTCFullYear();
  if (Number.isNaN(utc) || year < 1 || year > 9999) throw invalid(`${field} "${original}" is outside the years 0001-9999 in UTC`);
  return date.toISOString();
}
