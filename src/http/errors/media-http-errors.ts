import { BlobStoreUnavailableError } from '../../blobs/blob-store.ts';
import { payloadTooLarge, unavailable, validationError } from './error-factory.ts';
import type { HttpError } from './http-error.ts';
import { MediaRejectedError, MediaTooLargeError } from '../../media/media-errors.ts';

/** Media refusals as HTTP errors of the spec's envelope: 413 PAYLOAD_TOO_LARGE, 400 VALIDATION_ERROR, 503. */
export function mediaHttpError(error: unknown): HttpError | undefined {
  if (error instanceof MediaTooLargeError) {
    return payloadTooLarge(error.limitBytes, { hint: `Media files are limited to ${error.limitBytes} bytes (MEDIA_MAX_BYTES).` });
  }
  if (error instanceof MediaRejectedError) return validationError(error.message, { hint: error.hint });
  if (error instanceof BlobStoreUnavailableError) return unavailable('Media storage is temporarily unavailable; retry shortly.', { retryAfterSeconds: 5, cause: error });
  return undefined;
}

/** Runs `work`, turning media refusals into HTTP errors; anything else is rethrown as is. */
export async function asHttp<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw mediaHttpError(error) ?? error;
  }
}
