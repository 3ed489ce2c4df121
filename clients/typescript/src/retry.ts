import { retryAfterSecondsOf } from './errors.ts';

export interface RetryOptions {
  /** Retries of a request answered 429 (default 2): at most this many more attempts. 0: never retry. */
  maxRetries?: number;
  /**
   * The longest wait the client accepts (default 120 000 ms): a longer Retry-After is not waited for, the
   * 429 is thrown. The service's rate limit slides over 60 s windows, so its Retry-After can reach 120 s.
   */
  maxDelayMs?: number;
  /** Waits when Retry-After is absent (default 1 000 ms). */
  defaultDelayMs?: number;
  /** How to wait (default setTimeout); tests and schedulers inject their own. */
  sleep?: (ms: number) => Promise<void>;
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A fetch that honours 429 Too Many Requests: it waits Retry-After (seconds or an HTTP date) and sends
 * the same request again, at most `maxRetries` times and never longer than `maxDelayMs` at once; then
 * the last answer is returned as it is. A 429 means the request was not carried out, so resending is safe.
 */
export function retryingFetch(send: (request: Request) => Promise<Response>, options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const maxRetries = options.maxRetries ?? 2;
  const maxDelayMs = options.maxDelayMs ?? 120_000;
  const defaultDelayMs = options.defaultDelayMs ?? 1_000;
  const sleep = options.sleep ?? wait;
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= maxRetries;
      const response = await send(last ? request : request.clone());
      if (response.status !== 429 || last) return response;
      const seconds = retryAfterSecondsOf(response);
      const delayMs = seconds === undefined ? defaultDelayMs : seconds * 1000;
      if (delayMs > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(delayMs);
    }
  };
}
