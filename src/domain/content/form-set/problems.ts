import { DomainError } from '../../domain-error.ts';

/**
 * One problem found in a document (a form set definition, a master, a blueprint): where, what, and the
 * error code it maps to. Validators report every problem they find, never only the first.
 */
export interface Problem {
  /** Dotted path naming the offending part, e.g. `fields.category.masterEntityKey`. */
  path: string;
  message: string;
  code: 'VALIDATION_ERROR' | 'CONFLICT';
}

export function problem(path: string, message: string, code: Problem['code'] = 'VALIDATION_ERROR'): Problem {
  return { path, message, code };
}

export function formatProblem(p: Problem): string {
  return p.path ? `${p.path}: ${p.message}` : p.message;
}

/** Joins problems into one message; every problem is named. */
export function problemsMessage(problems: readonly Problem[]): string {
  return problems.map(formatProblem).join('; ');
}

/**
 * The DomainError for a list of problems: VALIDATION_ERROR when any problem needs different input,
 * CONFLICT when every problem is a clash with something that exists.
 */
export function problemsError(subject: string, problems: readonly Problem[]): DomainError {
  const conflictOnly = problems.length > 0 && problems.every((p) => p.code === 'CONFLICT');
  const message = `${subject}: ${problemsMessage(problems)}`;
  return new DomainError(conflictOnly ? 'CONFLICT' : 'VALIDATION_ERROR', message);
}

/** Appends a path segment: identifiers as `.name`, indexes as `[n]`. */
export function joinPath(base: string, segment: string | number): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  return base ? `${base}.${segment}` : segment;
}
