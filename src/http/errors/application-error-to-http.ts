import { RetryLaterError } from '../../application/application-errors.ts';
import { HttpError } from './http-error.ts';

/**
 * An application refusal that a later identical request may not meet (write contention, an idempotent request
 * still in progress: 409; a read model being rebuilt: 503) with its code, `retryable: true` and Retry-After.
 */
export function applicationErrorToHttp(error: unknown): HttpError | undefined {
  if (!(error instanceof RetryLaterError)) return undefined;
  const seconds = String(Math.max(1, Math.ceil(error.retryAfterSeconds)));
  return new HttpError({ status: error.status, code: error.code, message: error.message, hint: error.hint, retryable: true, headers: { 'Retry-After': seconds } });
}
