/**
 * A decision the domain refuses, with the spec's error code. Pure: the HTTP layer maps the code to a
 * status (VALIDATION_ERROR 400, UNAUTHORIZED 401, FORBIDDEN/PLAN_REQUIRED/HUMAN_APPROVAL_REQUIRED/FOUR_EYES_REQUIRED 403, NOT_FOUND 404,
 * CONFLICT/REVISION_CONFLICT 409). Messages are shown to callers: name the field or rule, never a secret.
 */
export type DomainErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'PLAN_REQUIRED'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'REVISION_CONFLICT'
  /** The project's approval policy: agent keys may not approve or publish (humanApproval). 403. */
  | 'HUMAN_APPROVAL_REQUIRED'
  /** The project's approval policy: the approver or publisher must not be the last editor or the submitter (fourEyes). 403. */
  | 'FOUR_EYES_REQUIRED';

/**
 * What a refused command was about, when the one refusing knows it for certain (it loaded the entry, the
 * master, ...): the audit record of the refusal names it, and one about an entry goes into that entry's history.
 */
export interface RefusalSubject {
  entryId?: string;
  formSetId?: string;
  revisionId?: string;
  revision?: number;
  masterId?: string;
  assetId?: string;
  contactFormId?: string;
}

export class DomainError extends Error {
  override name = 'DomainError';
  /** Set by whoever knows what the refused command was about (see RefusalSubject). */
  subject?: RefusalSubject;
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }

  /** Names what the refused command was about, unless something more precise already did; returns the error. */
  about(subject: RefusalSubject): this {
    this.subject ??= subject;
    return this;
  }
}

export const invalid = (message: string, hint?: string) => new DomainError('VALIDATION_ERROR', message, hint);
export const forbidden = (message: string, hint?: string) => new DomainError('FORBIDDEN', message, hint);
export const notFound = (message: string, hint?: string) => new DomainError('NOT_FOUND', message, hint);
export const conflict = (message: string, hint?: string) => new DomainError('CONFLICT', message, hint);
export const revisionConflict = (message: string, hint?: string) => new DomainError('REVISION_CONFLICT', message, hint);
