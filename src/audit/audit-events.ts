import { z } from 'zod';
import { defineEvent } from '../event-store/event-catalog.ts';

/** The stream of signed anchors over events written before hash chains (see ./legacy-anchor.ts). */
export const AUDIT_ANCHOR_STREAM = 'audit-anchors';

const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/**
 * Events the log held without a hash-chain link (written before chains existed) are covered, once, by this
 * signed checkpoint instead of being rewritten: the SHA-256 over each of them in log order (stream, revision,
 * id and legacy link, see legacyDigestLine) and how many there are, signed with the audit key. `signature`
 * is a compact JWS (EdDSA, Ed25519) whose payload repeats these fields (AnchorPayload).
 */
export const auditLogAnchored = defineEvent({
  type: 'audit.log-anchored',
  version: 1,
  schema: z.object({
    coveredEvents: z.number().int().positive(),
    digest,
    firstEventId: z.uuid(),
    lastEventId: z.uuid(),
    anchoredAt: z.iso.datetime({ precision: 3 }),
    keyId: z.string().min(1),
    signature: z.string().regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'a compact JWS'),
  }),
});

export type AuditLogAnchored = z.infer<typeof auditLogAnchored.schema>;

/** The stream of the audit key chain's announcements, as the log records them (see ./key-announcement-log.ts). */
export const AUDIT_KEYS_STREAM = 'audit-keys';

/**
 * An audit key announced in the key chain (./key-chain.ts), recorded in the log so that the log's tree,
 * its checkpoints and exports carry every key with its validity: `announcement` is the chain's line as it
 * is (a JWS signed by the previous key and by the key itself), which verifies with the chain before it.
 */
export const auditKeyAnnounced = defineEvent({
  type: 'audit.key-announced',
  version: 1,
  schema: z.object({
    sequence: z.number().int().nonnegative(),
    keyId: z.string().min(1),
    validFrom: z.iso.datetime({ precision: 3 }),
    previousKeyId: z.string().min(1).nullable(),
    digest,
    announcement: z.object({ payload: z.string(), signatures: z.array(z.object({ protected: z.string(), signature: z.string() })).min(1) }),
  }),
});

export type AuditKeyAnnounced = z.infer<typeof auditKeyAnnounced.schema>;


/** The stream of records about the log's checkpoints (overrides of the start-up check). */
export const AUDIT_CHECKPOINT_STREAM = 'audit-checkpoints';

/**
 * The service was started with AUDIT_ACCEPT_CHECKPOINT_MISMATCH although its log does not extend its last
 * published checkpoint: writes were let through. What the check found, and the reason the operator gave.
 */
export const auditCheckpointMismatchOverridden = defineEvent({
  type: 'audit.checkpoint-mismatch-overridden',
  version: 1,
  schema: z.object({
    reason: z.string().min(10).max(500),
    detail: z.string().max(2000),
    firstLeaf: z.number().int().nonnegative().nullable(),
    checkedAt: z.iso.datetime({ precision: 3 }),
  }),
});

/**
 * A signed checkpoint of the log's Merkle tree, recorded in the log itself so that the webhook outbox hands it to
 * every webhook subscribed to `log.checkpoint` (at most every AUDIT_CHECKPOINT_WEBHOOK_SECONDS, and only when the
 * log changed by more than the deliveries of the last one). The note is what to keep and verify.
 */
export const auditCheckpointRecorded = defineEvent({
  type: 'audit.checkpoint-recorded',
  version: 1,
  schema: z.object({
    size: z.number().int().nonnegative(),
    rootHash: z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'a base64 SHA-256'),
    note: z.string().min(1).max(10_000),
    signedAt: z.iso.datetime({ precision: 3 }),
  }),
});

export const auditEvents = [auditLogAnchored, auditKeyAnnounced, auditCheckpointMismatchOverridden, auditCheckpointRecorded];
