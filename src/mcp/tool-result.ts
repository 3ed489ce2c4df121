import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AdminApiError, AdminApiUnreachableError } from './admin-api-client.ts';

/**
 * A failure a tool reports without calling the service, or after it: the service's envelope fields when
 * it answered, the tool's own otherwise (VALIDATION_ERROR for arguments, FORBIDDEN for a session-only
 * tool without a session, NOT_FOUND for an unknown help article).
 */
export class ToolFailure extends Error {
  override name = 'ToolFailure';
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * A successful result: the answer as structured content (checked against the tool's outputSchema) and,
 * for clients that read text only, the same as indented JSON text.
 */
export function toolSuccess(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

/**
 * A failed call as an MCP tool error (isError: true). The text starts with the error code and message,
 * then the hint and whether a retry may help, then the envelope as JSON, so an agent can read either.
 */
export function toolError(error: unknown): CallToolResult {
  const fields = errorFields(error);
  const lines = [`${fields.code}${fields.status === undefined ? '' : ` (HTTP ${fields.status})`}: ${fields.message}`];
  if (fields.hint) lines.push(`Hint: ${fields.hint}`);
  if (fields.retryable === false) lines.push('Retrying unchanged will not help: change the input first.');
  if (fields.retryable === true) lines.push(`The same call may succeed later${fields.retryAfter ? ` (retry after ${fields.retryAfter} s)` : ''}.`);
  const envelope = {
    error: {
      code: fields.code,
      message: fields.message,
      ...(fields.hint ? { hint: fields.hint } : {}),
      ...(fields.retryable === undefined ? {} : { retryable: fields.retryable }),
    },
    ...(fields.status === undefined ? {} : { status: fields.status }),
  };
  lines.push('', JSON.stringify(envelope, null, 2));
  return { content: [{ type: 'text', text: lines.join('\n') }], isError: true };
}

interface ErrorFields {
  code: string;
  message: string;
  hint?: string | undefined;
  retryable?: boolean | undefined;
  retryAfter?: string | undefined;
  status?: number | undefined;
}

function errorFields(error: unknown): ErrorFields {
  if (error instanceof AdminApiError) {
    return { code: error.code, message: error.message, hint: error.hint, retryable: error.retryable, retryAfter: error.retryAfter, status: error.status };
  }
  if (error instanceof ToolFailure) return { code: error.code, message: error.message, hint: error.hint, status: error.status, retryable: false };
  if (error instanceof AdminApiUnreachableError) {
    return { code: 'SERVICE_UNREACHABLE', message: error.message, hint: 'Check ANNALS_ADMIN_BASE and that the service is running.', retryable: true };
  }
  return { code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error) };
}
