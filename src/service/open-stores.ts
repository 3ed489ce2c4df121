import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { EventStore } from '../event-store/event-store.ts';
import type { ReadModelStore } from '../read-models/read-model-store.ts';
import { SqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { SqliteReadModelStore } from '../read-models/sqlite-read-model-store.ts';
import { redactUrl } from '../logging/redact-url.ts';

export interface Stores {
  events: EventStore;
  readModels: ReadModelStore;
  close(): Promise<void>;
}

/** A store could not be opened or reached at start-up; the message says which and why. */
export class StoreStartupError extends Error {
  override name = 'StoreStartupError';
}

export interface OpenStoresOptions {
  /** Large read-model commits on the event loop's connection (embedded default; see SqliteReadModelStoreOptions). Default true; the service passes false. */
  inlineBulkCommits?: boolean;
}

/**
 * Opens the adapters the configuration names and checks that each answers, so that a service that
 * starts is one whose stores work. Production adapters are loaded only when configured.
 */
export async function openStores(config: Config, logger: Logger, options: OpenStoresOptions = {}): Promise<Stores> {
  const events = await openEventStore(config);
  let readModels: ReadModelStore;
  let readModelsDetail: Record<string, string>;
  try {
    ({ store: readModels, detail: readModelsDetail } = await openReadModels(config, options));
  } catch (error) {
    await events.close();
    throw error;
  }
  logger.info({ eventStore: describeEventStore(config), readModels: describeReadModels(config), ...readModelsDetail }, 'stores open');
  return {
    events,
    readModels,
    close: async () => {
      await Promise.allSettled([events.close(), readModels.close()]);
    },
  };
}

async function openEventStore(config: Config): Promise<EventStore> {
  const where = describeEventStore(config);
  let store: EventStore | undefined;
  try {
    if (config.eventStore.kind === 'sqlite') {
      store = SqliteEventStore.open(config.eventStore.file);
    } else {
      const { EventStoreDbEventStore } = await import('../event-store/esdb-event-store.ts');
      store = EventStoreDbEventStore.connect(config.eventStore.connectionString);
    }
    await store.ping();
    return store;
  } catch (error) {
    await store?.close().catch(() => undefined);
    throw new StoreStartupError(`event store (${where}) unavailable: ${redactUrl(messageOf(error))}`, { cause: error });
  }
}

/** The read-model store, checked, and what the log line of the stores says of it beyond where it is. */
async function openReadModels(config: Config, options: OpenStoresOptions): Promise<{ store: ReadModelStore; detail: Record<string, string> }> {
  const where = describeReadModels(config);
  let store: ReadModelStore | undefined;
  try {
    const detail: Record<string, string> = {};
    if (config.readModels.kind === 'sqlite') {
      store = SqliteReadModelStore.open(config.readModels.file, options);
    } else {
      const { MongoReadModelStore } = await import('../read-models/mongo-read-model-store.ts');
      const mongo = await MongoReadModelStore.connect(config.readModels.url);
      store = mongo;
      // In transactions (a replica set, mongos) or through the journal (a standalone server): see mongo-commits.ts.
      detail['readModelCommits'] = await mongo.commitMode();
    }
    await store.ping();
    return { store, detail };
  } catch (error) {
    await store?.close().catch(() => undefined);
    throw new StoreStartupError(`read models (${where}) unavailable: ${redactUrl(messageOf(error))}`, { cause: error });
  }
}

function describeEventStore(config: Config): string {
  return config.eventStore.kind === 'sqlite' ? `SQLite ${config.eventStore.file}` : `EventStoreDB ${redactUrl(config.eventStore.connectionString)}`;
}

function describeReadModels(config: Config): string {
  return config.readModels.kind === 'sqlite' ? `SQLite ${config.readModels.file}` : `MongoDB ${redactUrl(config.readModels.url)}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
