/**
 * Refusals of the application layer that are not the caller's mistake and not a domain rule: the same
 * request may succeed when sent again after `retryAfterSeconds`. The HTTP edge answers them 409 with
 * `retryable: true` and Retry-After (see src/http/errors/application-error-to-http.ts).
 */
export abstract class RetryLaterError extends Error {
  abstract readonly code: string;
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
