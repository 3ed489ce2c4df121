import { DomainError } from '../../domain/domain-error.ts';
import { HttpError } from './http-error.ts';

const STATUS: Record<DomainError['code'], number> = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  PLAN_REQUIRED: 403,
  HUMAN_APPROVAL_REQUIRED: 403,
  FOUR_EYES_REQUIRED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  REVISION_CONFLICT: 409,
};

/** The HTTP status a domain error code answers with. */
export function statusOfDomainCode(code: DomainError['code']): number {
  return STATUS[code];
}

/** A domain refusal as an HTTP error of the spec's envelope. Retrying unchanged will not help. */
export function domainErrorToHttp(error: unknown): HttpError | undefined {
  if (!(error instanceof DomainError)) return undefined;
  return new HttpError({
    status: STATUS[error.code],
    code: error.code,
    message: error.message,
    ...(error.hint === undefined ? {} : { hint: error.hint }),
    retryable: false,
  });
}
