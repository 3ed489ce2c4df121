/**
 * What the appender expects of the stream:
 * - 'any': no check;
 * - 'no_stream': the stream has no events (never written, or deleted);
 * - 'stream_exists': the stream has at least one event;
 * - a bigint: the revision of the stream's last event.
 */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;
