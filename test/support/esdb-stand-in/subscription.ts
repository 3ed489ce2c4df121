/**
 * A subscription to $all, as KurrentDB runs one over Streams.Read with subscription options:
 *
 * 1. the start position must be 0, the end of the log or the start of a record (INVALID_ARGUMENT "Trying to
 *    read from an invalid position." otherwise); the subscription delivers what comes strictly after it;
 * 2. a confirmation first, then every record after the start in log order (system events included, unless
 *    the filter leaves them out), catching up and then live without a gap: one cursor walks the log, and
 *    waits at its end for the next write;
 * 3. a filtered subscription reports progress through a checkpoint every `window × multiplier` records it
 *    considered (window: the client's `max`, or 32 when it sends `count`; multiplier: its checkpoint interval
 *    multiplier), during catch-up and live alike, at the position of the last record considered;
 *    unfiltered subscriptions get no checkpoints. A run of unmatched live records shorter than that is never
 *    reported: that is the server behaviour the adapter has to make up for;
 * 4. when the cursor first reaches the end of the log, "caught up": bare (23.10), with the time and the
 *    position of the last record (24.x), or not at all (before 23.10), as the stand-in's profile says;
 * 5. the client's pace: writes wait while the client does not read (HTTP/2 flow control), as on the server.
 *
 * Deviations from KurrentDB: no "fell behind" (the stand-in never drops a slow subscriber to a paged
 * catch-up); filters are JavaScript regular expressions, not .NET ones (the same for the anchored, escaped
 * patterns the adapter sends).
 */
import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type { EsdbLog, LogRecord } from './log.ts';
import { caughtUpResp, checkpointResp, confirmationResp, eventResp, serverErrors, write, type ReadReq, type ReadRespMessage, type UuidFormat } from './protocol.ts';

type ReadOptions = InstanceType<typeof ReadReq.Options>;
type FilterOptions = InstanceType<typeof ReadReq.Options.FilterOptions>;

/** The server's default search window: a filtered subscription sending `count` checkpoints every 32 × multiplier records. */
export const DEFAULT_SEARCH_WINDOW = 32;

export type CaughtUpReport = 'with-position' | 'bare' | 'none';

/** The records a filter lets through, and how often a filtered subscription checkpoints. */
export interface RecordFilter {
  matches(record: LogRecord): boolean;
  /** Records considered per checkpoint; Infinity without a filter. */
  checkpointEvery: number;
}

export function recordFilter(options: ReadOptions): RecordFilter {
  if (!options.hasFilter()) return { matches: () => true, checkpointEvery: Number.POSITIVE_INFINITY };
  const filter: FilterOptions = options.getFilter()!;
  const onType = filter.hasEventType();
  const expression = onType ? filter.getEventType()! : filter.getStreamIdentifier()!;
  const prefixes = expression.getPrefixList();
  const regex = expression.getRegex() ? new RegExp(expression.getRegex()) : undefined;
  const window = filter.hasMax() ? filter.getMax() : DEFAULT_SEARCH_WINDOW;
  const multiplier = Math.max(1, filter.getCheckpointintervalmultiplier());
  return {
    matches(record) {
      const subject = onType ? record.type : record.streamId;
      if (prefixes.length > 0) return prefixes.some((prefix) => subject.startsWith(prefix));
      return regex ? regex.test(subject) : true;
    },
    checkpointEvery: window * multiplier,
  };
}

export interface SubscriptionContext {
  log: EsdbLog;
  caughtUp: CaughtUpReport;
  clock: () => Date;
  /** Told of every start position asked for (tests look at resubscriptions). */
  onStart(from: bigint | 'start' | 'end'): void;
}

/** Runs one subscription to $all on a server-streaming Read call until the client cancels or the server ends it. */
export async function runSubscription(
  call: grpc.ServerWritableStream<unknown, ReadRespMessage>,
  options: ReadOptions,
  uuidFormat: UuidFormat,
  context: SubscriptionContext,
): Promise<void> {
  const { log } = context;
  const all = options.getAll()!;
  let from: bigint | 'start' | 'end' = 'start';
  if (all.hasEnd()) from = 'end';
  else if (all.hasPosition()) {
    const position = all.getPosition()!;
    const commit = BigInt(position.getCommitPosition());
    if (commit !== BigInt(position.getPreparePosition()) || !log.isRecordBoundary(commit)) {
      call.emit('error', serverErrors.invalidPosition());
      return;
    }
    from = commit;
  }
  context.onStart(from);
  const filter = recordFilter(options);

  let cancelled = false;
  let wake: (() => void) | undefined;
  const stopWaiting = () => {
    cancelled = true;
    wake?.();
  };
  call.on('cancelled', stopWaiting);
  call.on('close', stopWaiting);
  const unlisten = log.listen(() => wake?.());
  const send = (message: ReadRespMessage) => write(call, message);

  try {
    await send(confirmationResp(randomUUID()));
    // The cursor: the position of the last record considered (null: before the first).
    let cursor: bigint | null = from === 'start' ? null : from === 'end' ? log.end : from;
    let considered = 0;
    let caughtUp = false;
    while (!cancelled) {
      const next = log.recordsAfter(cursor);
      for (const record of next) {
        if (cancelled) return;
        cursor = record.position;
        considered += 1;
        if (filter.matches(record)) await send(eventResp(record, uuidFormat));
        if (considered % filter.checkpointEvery === 0) await send(checkpointResp(record.position, context.clock()));
      }
      if (cancelled) return;
      if (!caughtUp) {
        caughtUp = true;
        if (context.caughtUp !== 'none') {
          const last = log.records.at(-1)?.position ?? null;
          await send(caughtUpResp(context.caughtUp === 'with-position' ? last : null, context.clock()));
        }
      }
      if (log.recordsAfter(cursor).length > 0) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    unlisten();
  }
}
