import { z } from 'zod';
import { ErrorCode } from '../errors/error-factory.ts';

const ALL_CODES = Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]];

/**
 * The error envelope of spec section 7, `{error: {code, message, hint?, retryable?}}`, as the
 * error-envelope middleware writes it; `codes` narrows `code` to those an answer can carry.
 */
export function errorEnvelopeSchema(codes: readonly ErrorCode[] = ALL_CODES) {
  return z.object({
    error: z.object({
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      hint: z.string().optional().describe('What the caller can do about it.'),
      retryable: z.boolean().optional().describe('false: the input must change before retrying; true: the same request may succeed later.'),
    }),
  });
}
