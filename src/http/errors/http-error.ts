/**
 * The error every HTTP handler throws (built by the factories in error-factory.ts, never by hand in a
 * handler). The error-envelope middleware turns it into `{error: {code, message, hint?, retryable?}}` with
 * `status` and `headers`. `expose` says whether `message` may be shown to the client; when it is false the
 * client sees a generic message and the real one (and `cause`) only reach the logs.
 */
export interface HttpErrorInit {
  status: number;
  code: string;
  message: string;
  hint?: string | undefined;
  /** false: the input must change before retrying; true: the same request may succeed later; unset: unknown. */
  retryable?: boolean | undefined;
  /** Default: true below 500, false from 500. */
  expose?: boolean | undefined;
  /** Response headers that belong to the error (Retry-After, WWW-Authenticate, Allow). */
  headers?: Readonly<Record<string, string>> | undefined;
  cause?: unknown;
}

export class HttpError extends Error {
  override name = 'HttpError';
  readonly status: number;
  readonly code: string;
  readonly hint: string | undefined;
  readonly retryable: boolean | undefined;
  readonly expose: boolean;
  readonly headers: Readonly<Record<string, string>>;

  constructor(init: HttpErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    if (!Number.isInteger(init.status) || init.status < 400 || init.status > 599) {
      throw new RangeError(`HttpError status must be an integer from 400 to 599, got ${init.status}`);
    }
    this.status = init.status;
    this.code = init.code;
    this.hint = init.hint;
    this.retryable = init.retryable;
    this.expose = init.expose ?? init.status < 500;
    this.headers = init.headers ?? {};
  }
}

export function isHttpError(value: unknown): value is HttpError {
  return value instanceof HttpError;
}

/** The `error` member of the response body. */
export interface ErrorBody {
  code: string;
  message: string;
  hint?: string;
  retryable?: boolean;
}

export interface ErrorEnvelope {
  error: ErrorBody;
}
