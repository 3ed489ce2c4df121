import { pino, stdSerializers, stdTimeFunctions } from 'pino';
import type { DestinationStream, LevelWithSilent, Logger as PinoLogger, LoggerOptions } from 'pino';
import { redactUrl } from './redact-url.ts';

export { redactUrl } from './redact-url.ts';

/** The service's logger: pino, structured JSON, one line per entry. */
export type Logger = PinoLogger;
export type LogLevel = LevelWithSilent;

export interface LoggerSettings {
  /** Minimum level written. Validated upstream (configuration); `silent` writes nothing. */
  level: LogLevel;
  /** Human-readable colourised output through pino-pretty (a dev dependency): local development only. */
  pretty?: boolean;
  /** Where JSON lines go; default stdout. Tests pass a stream to capture the output. Ignored when `pretty`. */
  destination?: DestinationStream;
  /** Fixed fields on every line besides pid and hostname, e.g. `{ role: 'projector' }`. */
  base?: Record<string, unknown>;
}

/**
 * Property names whose values never reach a log line in clear. Compared case-insensitively, at any depth of
 * the logged object (`password`, `req.headers.authorization`, `body.items[3].apiKey`), inside errors' own
 * properties, and at the top level of child-logger bindings.
 */
export const REDACTED_KEYS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-service-public-api-key',
  'x-service-signature',
  'password',
  'passwd',
  'secret',
  'signingSecret',
  'clientSecret',
  'secretAccessKey',
  'apiKey',
  'api_key',
  'token',
  'accessToken',
  'refreshToken',
  'previewToken',
];

export const REDACTION_CENSOR = '[REDACTED]';

/** Objects nested deeper than this are written as `[Truncated]` (the redaction walk is bounded). */
export const MAX_LOGGED_DEPTH = 16;

/**
 * A pino logger writing structured JSON (`level` as a label, `time` as ISO 8601 UTC) that never writes a
 * secret in clear:
 * - values under REDACTED_KEYS become `[REDACTED]` (logged objects at any depth, errors, child bindings);
 * - credentials inside URLs anywhere in the line (messages, fields, stacks) become `***` (see redactUrl).
 */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    timestamp: stdTimeFunctions.isoTime,
    // Logged objects: walked in full. Child bindings skip formatters.log, so pino's own redaction covers
    // their top-level keys (no wildcard paths: those cost tens of microseconds per line).
    formatters: { log: (object) => redactObject(object) },
    redact: { paths: bindingRedactionPaths(), censor: REDACTION_CENSOR },
    serializers: { err: serializeError, error: serializeError },
    hooks: { streamWrite: redactUrl },
  };
  if (settings.base !== undefined) options.base = { pid: process.pid, ...settings.base };

  if (settings.pretty) {
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } },
    });
  }
  options.formatters = { ...options.formatters, level: (label) => ({ level: label }) };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}

const redactedKeys = new Set(REDACTED_KEYS.map((key) => key.toLowerCase()));

function bindingRedactionPaths(): string[] {
  const spellings = new Set<string>();
  for (const key of REDACTED_KEYS) {
    spellings.add(key);
    spellings.add(key.toLowerCase());
    spellings.add(key.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase()));
  }
  return [...spellings].map((key) => (/^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`));
}

/** A copy of the object with redacted keys censored; the caller's object is never modified. */
export function redactObject(object: Record<string, unknown>): Record<string, unknown> {
  return redactValue(object, 0, new Set()) as Record<string, unknown>;
}

function redactValue(value: unknown, depth: number, ancestors: Set<object>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Error) return serializeError(value, depth, ancestors);
  if (ArrayBuffer.isView(value) || value instanceof Date) return value;
  if (depth >= MAX_LOGGED_DEPTH) return '[Truncated]';
  if (ancestors.has(value)) return '[Circular]';
  const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    // Serialise the way JSON.stringify would (a Koa context's toJSON includes the request headers).
    ancestors.add(value);
    const json: unknown = toJSON.call(value);
    const redacted = json === value ? json : redactValue(json, depth + 1, ancestors);
    ancestors.delete(value);
    return redacted;
  }

  ancestors.add(value);
  let copy: Record<string, unknown> | unknown[] | undefined;
  if (Array.isArray(value)) {
    let items: unknown[] | undefined;
    for (let i = 0; i < value.length; i += 1) {
      const item: unknown = value[i];
      const redacted = redactValue(item, depth + 1, ancestors);
      if (redacted !== item) {
        items ??= value.slice();
        items[i] = redacted;
      }
    }
    copy = items;
  } else {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const item = record[key];
      const redacted = redactedKeys.has(key.toLowerCase())
        ? item === undefined || item === null ? item : REDACTION_CENSOR
        : redactValue(item, depth + 1, ancestors);
      if (redacted !== item) {
        copy ??= { ...record };
        (copy as Record<string, unknown>)[key] = redacted;
      }
    }
  }
  ancestors.delete(value);
  return copy ?? value;
}

/** pino's standard error serialiser (type, message and stack with causes, own fields), redacted. */
function serializeError(value: unknown, depth = 0, ancestors: Set<object> = new Set()): unknown {
  if (!(value instanceof Error)) return value;
  if (ancestors.has(value)) return '[Circular]';
  ancestors.add(value);
  const serialized = redactValue({ ...stdSerializers.err(value) }, depth + 1, ancestors);
  ancestors.delete(value);
  return serialized;
}
