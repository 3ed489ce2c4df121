/**
 * How the service's HTTP layer answers the errors of the layers below it (the admin and public APIs'
 * errorEnvelope translate).
 */
import { ErrorCode, unavailable } from '../http/errors/error-factory.ts';
import { domainErrorToHttp } from '../http/errors/domain-error-to-http.ts';
import { applicationErrorToHttp } from '../http/errors/application-error-to-http.ts';
import { HttpError } from '../http/errors/http-error.ts';
import { EventTooLargeError, NotLeaderError, UnavailableError } from '../event-store/errors.ts';
import { ReadModelUnavailableError, TextSearchUnavailableError } from '../read-models/read-model-store.ts';
import { WritesRefusedError } from '../audit/log-integrity.ts';


/**
 * Domain refusals keep their spec code and status. A store that cannot be reached is the service's
 * temporary trouble, not the caller's: 503, retryable.
 */
export function translateErrors(error: unknown): HttpError | undefined {
  const domain = domainErrorToHttp(error) ?? applicationErrorToHttp(error);
  if (domain) return domain;
  if (error instanceof EventTooLargeError) {
    return new HttpError({
      status: 413,
      code: ErrorCode.PAYLOAD_TOO_LARGE,
      message: `What this request would store is over the limit of ${error.limitBytes} bytes per write (the data and metadata of its events).`,
      hint: 'Store less in one request: shorter text, or files as media.',
      retryable: false,
      cause: error,
    });
  }
  if (error instanceof WritesRefusedError) {
    return new HttpError({ status: 503, code: ErrorCode.SERVICE_UNAVAILABLE, message: error.message, retryable: false, expose: true, cause: error });
  }
  if (error instanceof TextSearchUnavailableError) return unavailable('Full-text search is not available: the read-model server has no text indexes.', { cause: error });
  if (error instanceof UnavailableError || error instanceof NotLeaderError || error instanceof ReadModelUnavailableError) {
    return unavailable('A data store is temporarily unavailable; retry shortly.', { retryAfterSeconds: 5 });
  }
  return undefined;
}

