/**
 * Refusals of the application layer that are not the caller's mistake and not a domain rule: the same
 * request may succeed when sent again after `retryAfterSeconds`. The HTTP edge answers them with their status
 * (409 unless said otherwise), `retryable: true` and Retry-After (see src/http/errors/application-error-to-http.ts).
 */
export abstract class RetryLaterError extends Error {
  abstract readonly code: string;
  /** The HTTP status: 409 (the default) for a refusal of this request, 503 for a part of the service not ready yet. */
  readonly status: 409 | 503 = 409;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    readonly hint: string,
  ) {
    super(message);
  }
}

/** A command lost the race to append to its stream every time it was retried (see write-retry.ts). */
export class WriteContentionError extends RetryLaterError {
  override name = 'WriteContentionError';
  readonly code = 'CONFLICT';
  constructor(
    readonly streamId: string,
    attempts: number,
  ) {
    super(
      `Too many simultaneous writes to the same item: this one was retried ${attempts} times without getting in.`,
      1,
      'Nothing was written; send the same request again.',
    );
  }
}

/** A request with this idempotency key is being processed (by another process, or one that died recently). */
export class IdempotencyInProgressError extends RetryLaterError {
  override name = 'IdempotencyInProgressError';
  readonly code = 'IDEMPOTENCY_IN_PROGRESS';
  constructor(retryAfterSeconds: number) {
    super(
      'A request with this idempotency key is still being processed.',
      retryAfterSeconds,
      'Send the same request again after Retry-After seconds to get its result.',
    );
  }
}

/**
 * A read model the answer needs is still built by an earlier version of its projection, whose documents this
 * version does not read (an upgrade rebuilds it in the background, and swaps it in once it has caught up).
 */
export class ReadModelRebuildingError extends RetryLaterError {
  override name = 'ReadModelRebuildingError';
  readonly code = 'SERVICE_UNAVAILABLE';
  override readonly status = 503;
  constructor(projection: string, builtBy: number, needs: number) {
    super(
      `The ${projection} read model is being rebuilt for this version of the service (it was built by version ${builtBy} of its projection; this answer needs ${needs}).`,
      5,
      'Send the request again shortly; `annals projections status` shows the rebuild.',
    );
  }
}
