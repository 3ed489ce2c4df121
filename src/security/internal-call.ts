import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Admin calls the service makes to itself on behalf of one request (the remote MCP endpoint's tools call
 * the admin API over loopback with the caller's key). They carry this header with a token made at start
 * and known only to this process, so that the caller's rate limit counts the MCP request once rather than
 * once more per admin call behind it. Everything else (authentication, permissions, plans) applies as to
 * any request. A request from outside cannot know the token; a wrong one is simply ignored.
 */
export const INTERNAL_CALL_HEADER = 'X-Annals-Internal-Call';
const token = randomBytes(32).toString('base64url');

export function internalCallToken(): string {
  return token;
}

export function isInternalCall(ctx: { get(header: string): string }): boolean {
  const given = Buffer.from(ctx.get(INTERNAL_CALL_HEADER));
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
