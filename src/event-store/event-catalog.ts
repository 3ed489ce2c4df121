import type { z } from 'zod';
import type { RecordedEvent } from './event-store.ts';

/**
 * One event type's contract: the schema of its current version, and an upcaster for every older version,
 * each turning version n's data into version n + 1's. History written under an old version is upcast on
 * read, so projections only ever see the current shape.
 */
export interface EventDefinition<Type extends string = string, Data = unknown> {
  type: Type;
  version: number;
  schema: z.ZodType<Data>;
  /** upcasters[n] turns version n data into version n + 1 data, for every n from 1 to version - 1. */
  upcasters?: Readonly<Record<number, (data: unknown) => unknown>>;
}

export function defineEvent<const Type extends string, Data>(definition: EventDefinition<Type, Data>): EventDefinition<Type, Data> {
  if (!Number.isInteger(definition.version) || definition.version < 1) throw new Error(`${definition.type}: version must be a positive integer`);
  for (let v = 1; v < definition.version; v++) {
    if (!definition.upcasters?.[v]) throw new Error(`${definition.type}: version ${definition.version} needs an upcaster from version ${v}`);
  }
  return definition;
}

/** The event's data does not match its type's schema; nothing was appended. */
export class EventValidationError extends Error {
  override name = 'EventValidationError';
  constructor(readonly eventType: string, readonly issues: ReadonlyArray<{ path: string; message: string }>) {
    super(`invalid ${eventType} event: ${issues.map((i) => `${i.path || '(data)'}: ${i.message}`).join('; ')}`);
  }
}

export class UnknownEventTypeError extends Error {
  override name = 'UnknownEventTypeError';
  constructor(readonly eventType: string) {
    super(`event type ${JSON.stringify(eventType)} is not registered in the event catalog`);
  }
}

/** An event was written with a schema version newer than this code knows (an older build reading newer history). */
export class UnsupportedSchemaVersionError extends Error {
  override name = 'UnsupportedSchemaVersionError';
}

export class EventCatalog {
  readonly #definitions = new Map<string, EventDefinition>();

  constructor(definitions: readonly EventDefinition[] = []) {
    for (const definition of definitions) this.register(definition);
  }

  register(definition: EventDefinition): this {
    if (this.#definitions.has(definition.type)) throw new Error(`event type ${definition.type} registered twice`);
    this.#definitions.set(definition.type, definition);
    return this;
  }

  has(type: string): boolean {
    return this.#definitions.has(type);
  }

  types(): string[] {
    return [...this.#definitions.keys()];
  }

  /** Current schema version of a registered type. */
  versionOf(type: string): number {
    return this.#get(type).version;
  }

  /** Parses data for appending: returns the data as the schema outputs it (unknown keys dropped). */
  validate(type: string, data: unknown): unknown {
    const result = this.#get(type).schema.safeParse(data);
    if (!result.success) {
      throw new EventValidationError(type, result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })));
    }
    return result.data;
  }

  /** Brings an event written under an older schema version up to the current one. Unknown types pass unchanged. */
  upcast<E extends RecordedEvent>(event: E): E {
    const definition = this.#definitions.get(event.type);
    if (!definition) return event;
    const from = event.metadata.schemaVersion ?? 1;
    if (from === definition.version) return event;
    if (from > definition.version) {
      throw new UnsupportedSchemaVersionError(
        `${event.type} event ${event.id} has schema version ${from}, newer than this build's ${definition.version}: deploy the newer build`,
      );
    }
    let data = event.data;
    for (let v = from; v < definition.version; v++) data = definition.upcasters![v]!(data);
    return { ...event, data, metadata: { ...event.metadata, schemaVersion: definition.version } };
  }

  #get(type: string): EventDefinition {
    const definition = this.#definitions.get(type);
    if (!definition) throw new UnknownEventTypeError(type);
    return definition;
  }
}
