import { z } from 'zod';

/** Fields the access events share (access-events.ts and second-factor-events.ts). */
export const id = z.uuid();
export const keyHash = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex SHA-256');
export const sealedSecret = z.string().regex(/^v1\./, 'a sealed secret');
export const secondFactorMethod = z.enum(['totp', 'recovery-code', 'passkey']);
/** A WebAuthn credential's id (base64url, at most 1023 bytes by the standard). */
export const credentialId = z.string().regex(/^[A-Za-z0-9_-]{16,1400}$/, 'a base64url credential id');
