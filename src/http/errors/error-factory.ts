import { HttpError } from './http-error.ts';

/**
 * The one place HTTP errors are made: a function per error code of the spec (section 7) plus the few the
 * HTTP layer itself needs (415, 405). Handlers `throw notFound(...)`; the error-envelope middleware writes
 * the response. Messages are shown to clients (except internal()), so never put secrets or internals in them.
 */
export const ErrorCode = {
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  PLAN_REQUIRED: 'PLAN_REQUIRED',
  HUMAN_APPROVAL_REQUIRED: 'HUMAN_APPROVAL_REQUIRED',
  FOUR_EYES_REQUIRED: 'FOUR_EYES_REQUIRED',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  CONFLICT: 'CONFLICT',
  REVISION_CONFLICT: 'REVISION_CONFLICT',
  IDEMPOTENCY_IN_PROGRESS: 'IDEMPOTENCY_IN_PROGRESS',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface ErrorOptions {
  /** What the client can do about it; shown in `error.hint`. */
  hint?: string | undefined;
  /** The underlying error, for the logs only. */
  cause?: unknown;
}

/** The generic message sent for internal errors, whatever their cause. */
export const INTERNAL_ERROR_MESSAGE = 'An unexpected error occurred.';

/** 400: an invalid or missing parameter or body field. Retrying unchanged cannot succeed. */
export function validationError(message: string, options: ErrorOptions = {}): HttpError {
  return new HttpError({ status: 400, code: ErrorCode.VALIDATION_ERROR, message, retryable: false, ...options });
}

/**
 * 401: credentials missing, invalid or revoked (agent key, preview token). Carries `WWW-Authenticate: Bearer`
 * as HTTP requires for 401.
 */
export function unauthorized(message = 'Missing, invalid or revoked credentials.', options: ErrorOptions & { headers?: Record<string, string> } = {}): HttpError {
  const { headers, ...rest } = options;
  return new HttpError({
    status: 401,
    code: ErrorCode.UNAUTHORIZED,
    message,
    retryable: false,
    headers: { 'WWW-Authenticate': 'Bearer', ...headers },
    ...rest,
  });
}

/** 403: authenticated, but the key's scope or the role does not allow this. */
export function forbidden(message = 'These credentials do not allow this action.', options: ErrorOptions = {}): HttpError {
  return new HttpError({ status: 403, code: ErrorCode.FORBIDDEN, message, retryable: false, ...options });
}

/** 403: the feature needs a higher plan (full-text search below Business, webhooks below Standard, ...). */
export function planRequired(
  message = 'This feature is not included in the current plan.',
  options: ErrorOptions & { requiredPlan?: string } = {},
): HttpError {
  const { requiredPlan, ...rest } = options;
  const hint = rest.hint ?? (requiredPlan === undefined ? undefined : `Requires the ${requiredPlan} plan or above.`);
  return new HttpError({ status: 403, code: ErrorCode.PLAN_REQUIRED, message, retryable: false, ...rest, hint });
}

/** 404: unknown slug, asset or route; deleted entry. */
export function notFound(message = 'Not found.', options: ErrorOptions = {}): HttpError {
  return new HttpError({ status: 404, code: ErrorCode.NOT_FOUND, message, retryable: false, ...options });
}

/** 405: the path exists but not with this method. Sets the Allow header. */
export function methodNotAllowed(allowed: readonly string[], options: ErrorOptions = {}): HttpError {
  const list = allowed.map((method) => method.toUpperCase()).join(', ');
  return new HttpError({
    status: 405,
    code: ErrorCode.METHOD_NOT_ALLOWED,
    message: `Method not allowed; allowed: ${list}.`,
    retryable: false,
    headers: { Allow: list },
    ...options,
  });
}

/** 409: the resource already exists (a form set slug in its project, an entry slug in its form set). */
export function conflict(message: string, options: ErrorOptions = {}): HttpError {
  return new HttpError({ status: 409, code: ErrorCode.CONFLICT, message, retryable: false, ...options });
}

/**
 * 409: the revision (or revision row id) given is stale. Not retryable as is: reload, then retry with the
 * current revision.
 */
export function revisionConflict(
  message = 'The revision is stale: the entry has changed since it was read.',
  options: ErrorOptions = {},
): HttpError {
  return new HttpError({
    status: 409,
    code: ErrorCode.REVISION_CONFLICT,
    message,
    retryable: false,
    hint: 'Reload the entry and retry against its current revision.',
    ...options,
  });
}

/** 413: the request body is larger than the route accepts. */
export function payloadTooLarge(limitBytes?: number, options: ErrorOptions = {}): HttpError {
  const message =
    limitBytes === undefined ? 'The request body is too large.' : `The request body exceeds the limit of ${limitBytes} bytes.`;
  return new HttpError({ status: 413, code: ErrorCode.PAYLOAD_TOO_LARGE, message, retryable: false, ...options });
}

/** 415: the body's Content-Type (or Content-Encoding) is not one the route takes. */
export function unsupportedMediaType(
  message = 'Unsupported media type.',
  options: ErrorOptions = {},
): HttpError {
  return new HttpError({ status: 415, code: ErrorCode.UNSUPPORTED_MEDIA_TYPE, message, retryable: false, ...options });
}

/**
 * 429: rate limit exceeded. `retryAfterSeconds` is rounded up and sent as the Retry-After header; the same
 * request may be retried after it.
 */
export function rateLimited(retryAfterSeconds: number, options: ErrorOptions & { message?: string } = {}): HttpError {
  const { message = 'Rate limit exceeded.', ...rest } = options;
  const seconds = retryAfterHeaderValue(retryAfterSeconds);
  return new HttpError({
    status: 429,
    code: ErrorCode.RATE_LIMITED,
    message,
    retryable: true,
    hint: `Retry after ${seconds} seconds.`,
    headers: { 'Retry-After': seconds },
    ...rest,
  });
}

/**
 * 503: a dependency (event store, read models) is unavailable or the server is shutting down; the same request
 * may succeed later. `retryAfterSeconds` adds a Retry-After header.
 */
export function unavailable(
  message = 'The service is temporarily unavailable.',
  options: ErrorOptions & { retryAfterSeconds?: number } = {},
): HttpError {
  const { retryAfterSeconds, ...rest } = options;
  return new HttpError({
    status: 503,
    code: ErrorCode.SERVICE_UNAVAILABLE,
    message,
    retryable: true,
    expose: true,
    headers: retryAfterSeconds === undefined ? {} : { 'Retry-After': retryAfterHeaderValue(retryAfterSeconds) },
    ...rest,
  });
}

/**
 * 500: a fault on our side. The client always gets INTERNAL_ERROR_MESSAGE; the cause is for the logs.
 * `retryable` is left unset: whether a retry helps is unknown.
 */
export function internal(options: { cause?: unknown } = {}): HttpError {
  return new HttpError({
    status: 500,
    code: ErrorCode.INTERNAL_ERROR,
    message: INTERNAL_ERROR_MESSAGE,
    expose: false,
    cause: options.cause,
  });
}

function retryAfterHeaderValue(seconds: number): string {
  if (!Number.isFinite(seconds)) throw new RangeError(`retryAfterSeconds must be a finite number, got ${seconds}`);
  return String(Math.max(0, Math.ceil(seconds)));
}
