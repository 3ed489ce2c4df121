import { createHash } from 'node:crypto';

/**
 * The id of the delivery of one log event to one webhook: derived from both (a name-based UUID, version 8
 * layout over SHA-256), so that a rebuild of the webhooks projection arrives at the same ids and the
 * outcomes already in the log mark them done.
 */
export function deliveryIdFor(webhookId: string, sourceEventId: string): string {
  const bytes = createHash('sha256').update(`webhook-delivery:${webhookId}:${sourceEventId}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80; // version 8
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
