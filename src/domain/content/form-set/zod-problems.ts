import type { z } from 'zod';
import { joinPath, problem, type Problem } from './problems.ts';

/** Names a path segment; given the container's path, the segment and the whole input. */
export type SegmentNamer = (containerPath: ReadonlyArray<PropertyKey>, segment: PropertyKey, input: unknown) => string | number | null;

/**
 * Turns zod issues into problems with readable paths and messages that name the rule
 * (`fields.title.limits.maxLength: must be at most 1000000`).
 */
export function zodProblems(issues: readonly z.core.$ZodIssue[], input: unknown, base: string, nameSegment?: SegmentNamer): Problem[] {
  const problems: Problem[] = [];
  for (const issue of issues) {
    const path = renderPath(issue.path, input, base, nameSegment);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) problems.push(problem(joinPath(path, key), 'is not a known property'));
      continue;
    }
    problems.push(problem(path, zodIssueMessage(issue)));
  }
  return problems;
}

export function renderPath(path: ReadonlyArray<PropertyKey>, input: unknown, base: string, nameSegment?: SegmentNamer): string {
  let rendered = base;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    const named = nameSegment?.(path.slice(0, i), segment, input) ?? null;
    if (named !== null) rendered = joinPath(rendered, named);
    else rendered = joinPath(rendered, typeof segment === 'number' ? segment : String(segment));
  }
  return rendered;
}

function zodIssueMessage(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (/received undefined$/.test(issue.message)) return 'is required';
      return `must be ${article(issue.expected)}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${String(issue.maximum)} characters`;
      if (issue.origin === 'array') return `must have at most ${String(issue.maximum)} items`;
      return `must be at most ${String(issue.maximum)}`;
    case 'too_small':
      if (issue.origin === 'string') return Number(issue.minimum) === 1 ? 'must not be empty' : `must be at least ${String(issue.minimum)} characters`;
      if (issue.origin === 'array') return Number(issue.minimum) === 1 ? 'must have at least one item' : `must have at least ${String(issue.minimum)} items`;
      return `must be at least ${String(issue.minimum)}`;
    case 'invalid_format':
      if (issue.format === 'uuid') return 'must be a UUID';
      if (issue.format === 'datetime') return 'must be an ISO 8601 date-time with offset';
      return issue.message;
    case 'invalid_value':
      return `must be one of: ${issue.values.map((v) => String(v)).join(', ')}`;
    default:
      return issue.message;
  }
}

function article(expected: string): string {
  switch (expected) {
    case 'int':
      return 'an integer';
    case 'array':
    case 'object':
      return `an ${expected}`;
    case 'null':
      return 'null';
    default:
      return `a ${expected}`;
  }
}
