/**
 * An answer of the service in its error envelope `{error: {code, message, hint?, retryable?}}`, or an
 * answer that was not a success at all, as an exception: `status` is the HTTP status, `code` the
 * envelope's code (`HTTP_<status>` when the body was no envelope).
 */
export class AnnalsApiError extends Error {
  override name = 'AnnalsApiError';
  /** The HTTP status. */
  readonly status: number;
  /** VALIDATION_ERROR, UNAUTHORIZED, FORBIDDEN, PLAN_REQUIRED, NOT_FOUND, CONFLICT, REVISION_CONFLICT, RATE_LIMITED, ... */
  readonly code: string;
  /** What the caller can do about it, when the service says. */
  readonly hint: string | undefined;
  /** false: the input must change before retrying; true: the same request may succeed later; undefined: unknown. */
  readonly retryable: boolean | undefined;
  /** Seconds to wait before retrying (Retry-After), when the service sent it. */
  readonly retryAfterSeconds: number | undefined;
  /** The method and URL of the request. */
  readonly request: string;

  constructor(init: { status: number; code: string; message: string; hint?: string | undefined; retryable?: boolean | undefined; retryAfterSeconds?: number | undefined; request: string }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.hint = init.hint;
    this.retryable = init.retryable;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.request = init.request;
  }
}

interface Envelope {
  error: { code: string; message: string; hint?: string; retryable?: boolean };
}

function isEnvelope(body: unknown): body is Envelope {
  const error = (body as { error?: unknown } | null)?.error as Envelope['error'] | undefined;
  return typeof error === 'object' && error !== null && typeof error.code === 'string' && typeof error.message === 'string';
}

/** The exception of a failed answer, from its parsed body (openapi-fetch's `error`). */
export function apiErrorOf(response: Response, body: unknown, request: string): AnnalsApiError {
  const retryAfterSeconds = retryAfterSecondsOf(response);
  if (isEnvelope(body)) {
    const { code, message, hint, retryable } = body.error;
    return new AnnalsApiError({ status: response.status, code, message, hint, retryable, retryAfterSeconds, request });
  }
  const text = typeof body === 'string' && body !== '' ? `: ${body.slice(0, 200)}` : '';
  return new AnnalsApiError({ status: response.status, code: `HTTP_${response.status}`, message: `${request} answered ${response.status} ${response.statusText}${text}`.trim(), retryAfterSeconds, request });
}

/** Retry-After as seconds: a number of seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterSecondsOf(response: Response, now: number = Date.now()): number | undefined {
  const value = response.headers.get('Retry-After')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
