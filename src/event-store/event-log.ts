import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { EventCatalog } from './event-catalog.ts';
import type {
  Actor,
  AppendResult,
  EventStore,
  ExpectedRevision,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeToAllOptions,
  Subscription,
  SubscriptionMessage,
} from './event-store.ts';

/** What a command handler appends: the type and data; the log adds id, time and metadata. */
export interface PendingEvent {
  type: string;
  data: unknown;
}

/** Who and what caused the append. */
export interface AppendContext {
  actor: Actor;
  /** Ties together every event caused by one request; generated when absent. */
  correlationId?: string;
  /** The event or command that caused these events. */
  causationId?: string | null;
  idempotencyKey?: string;
}

/**
 * The application's view of the event store: appends are validated against the event catalog and
 * stamped with an id, the clock's time and the schema version; everything read is upcast to the
 * current schema versions. Wraps any EventStore adapter.
 */
export class EventLog {
  constructor(
    readonly store: EventStore,
    readonly catalog: EventCatalog,
    private readonly clock: Clock,
  ) {}

  async append(streamId: string, events: readonly PendingEvent[], expectedRevision: ExpectedRevision, context: AppendContext): Promise<AppendResult> {
    const occurredAt = this.clock.now().toISOString();
    const correlationId = context.correlationId ?? randomUUID();
    const stamped = events.map((event) => {
      const data = this.catalog.validate(event.type, event.data);
      const projectId = (data as { projectId?: unknown } | null)?.projectId;
      return {
        id: randomUUID(),
        type: event.type,
        data,
        metadata: {
          actor: context.actor,
          correlationId,
          causationId: context.causationId ?? null,
          ...(context.idempotencyKey === undefined ? {} : { idempotencyKey: context.idempotencyKey }),
          ...(typeof projectId === 'string' ? { projectId } : {}),
          occurredAt,
          schemaVersion: this.catalog.versionOf(event.type),
        },
      };
    });
    return this.store.append(streamId, stamped, expectedRevision);
  }

  async *readStream(streamId: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent> {
    for await (const event of this.store.readStream(streamId, options)) yield this.catalog.upcast(event);
  }

  async *readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    for await (const event of this.store.readAll(options)) yield this.catalog.upcast(event);
  }

  subscribeToAll(options?: SubscribeToAllOptions): Subscription {
    const inner = this.store.subscribeToAll(options);
    const catalog = this.catalog;
    return {
      stop: () => inner.stop(),
      async *[Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
        for await (const message of inner) {
          yield message.kind === 'event' ? { kind: 'event', event: catalog.upcast(message.event) } : message;
        }
      },
    };
  }

  headPosition(): Promise<bigint | null> {
    return this.store.headPosition();
  }

  deleteStream(streamId: string, expectedRevision?: ExpectedRevision): Promise<void> {
    return this.store.deleteStream(streamId, expectedRevision);
  }
}
