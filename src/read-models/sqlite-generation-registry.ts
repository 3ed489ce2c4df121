/**
 * The SQLite read-model store's registry of generations (projection_generations): creating, activating and
 * dropping a projection's generations, their records, failures and skipped events (projection_skips).
 */
import { decodeNullablePosition, decodePosition, encodePosition } from '../event-store/position.ts';
import type { LoopConnection } from './sqlite-loop-connection.ts';
import { searchTableName, tableName } from './sqlite-document-sql.ts';
import { createSearchTableSql, indexStatements } from './sqlite-read-model-schema.ts';
import {
  GenerationConflictError,
  ReadModelError,
  assertProjectionName,
  assertTextField,
  foldingIndexesOf,
  type GenerationRecord,
  type ModelTarget,
  type ProjectionFailure,
  type ReadModelSchema,
  type SkipRecord,
} from './read-model-store.ts';

interface GenerationRow {
  projection: string;
  generation: number;
  version: number;
  state: GenerationRecord['state'];
  checkpoint: string | null;
  failure: string | null;
  created_at: string;
  updated_at: string;
}

export class SqliteGenerationRegistry {
  readonly #conn: LoopConnection;
  /** Forgets what the deep pages' counts know of tables dropped (SqliteDeepPages.forgetTables). */
  readonly #forgetTables: (tables: string[]) => void;

  constructor(conn: LoopConnection, forgetTables: (tables: string[]) => void) {
    this.#conn = conn;
    this.#forgetTables = forgetTables;
  }

  async createGeneration(
    schema: ReadModelSchema,
    generation: number,
    version: number,
    now: string,
    options: { deferIndexes?: boolean } = {},
  ): Promise<GenerationRecord> {
    assertProjectionName(schema.projection);
    for (const [collection, spec] of Object.entries(schema.collections)) assertTextField(collection, spec);
    this.#conn.transaction(() => {
      for (const [collection, spec] of Object.entries(schema.collections)) {
        const target = { projection: schema.projection, generation };
        const table = tableName(target, collection);
        // pos: the position of the document's last write. INTEGER (since 2026-12-07; TEXT before): the
        // commits bind it as its 20-digit text, which SQLite stores as the integer it spells (1 to 8 bytes
        // against 20) and compares as one, in tables of either kind.
        this.#conn.db.exec(`CREATE TABLE IF NOT EXISTS "${table}" (id TEXT PRIMARY KEY, pos INTEGER NOT NULL, doc BLOB NOT NULL)`);
        // Empty until the indexes are created: a rebuild fills it once, after its bulk load.
        if (spec.textField !== undefined) this.#conn.db.exec(createSearchTableSql(searchTableName(target, collection)));
      }
      this.#createIndexes(options.deferIndexes ? foldingIndexesOf(schema, { uniqueOnly: true }) : schema, generation);
      this.#conn.stmt(
        `INSERT INTO projection_generations (projection, generation, version, state, checkpoint, failure, created_at, updated_at)
         VALUES (?, ?, ?, 'building', NULL, NULL, ?, ?) ON CONFLICT DO NOTHING`,
      ).run(schema.projection, generation, version, now, now);
    }).immediate();
    return (await this.getGeneration(schema.projection, generation))!;
  }

  /** Gives a generation its declared indexes and search tables on this connection, inside the caller's transaction. */
  #createIndexes(schema: ReadModelSchema, generation: number): void {
    const statements = indexStatements(this.#conn.db, schema, generation);
    for (const sql of statements) this.#conn.db.exec(sql);
    this.#conn.forgetStatementsAfter(statements);
  }

  async activateGeneration(projection: string, generation: number, expectedActive: number | null, now: string): Promise<void> {
    this.#conn.transaction(() => {
      const active = this.#activeNow(projection);
      if (active !== expectedActive) {
        throw new GenerationConflictError(`projection ${projection}: active generation is ${active ?? 'none'}, expected ${expectedActive ?? 'none'}`);
      }
      if (!this.#conn.stmt('SELECT 1 FROM projection_generations WHERE projection = ? AND generation = ?').get(projection, generation)) {
        throw new ReadModelError(`projection ${projection} has no generation ${generation}`);
      }
      this.#conn.stmt(`UPDATE projection_generations SET state = 'retired', updated_at = ? WHERE projection = ? AND state = 'active'`).run(now, projection);
      this.#conn.stmt(`UPDATE projection_generations SET state = 'active', updated_at = ? WHERE projection = ? AND generation = ?`).run(now, projection, generation);
    }).immediate();
  }

  async dropGeneration(schema: ReadModelSchema, generation: number): Promise<void> {
    this.#conn.transaction(() => {
      for (const collection of Object.keys(schema.collections)) {
        const target = { projection: schema.projection, generation };
        // The document table's triggers go with it; the search table of a collection that lost its
        // textField since is dropped too.
        this.#conn.db.exec(`DROP TABLE IF EXISTS "${tableName(target, collection)}"`);
        this.#conn.db.exec(`DROP TABLE IF EXISTS "${searchTableName(target, collection)}"`);
      }
      this.#conn.stmt('DELETE FROM projection_generations WHERE projection = ? AND generation = ?').run(schema.projection, generation);
      this.#conn.stmt('DELETE FROM projection_leases WHERE projection = ? AND generation = ?').run(schema.projection, generation);
      for (const collection of Object.keys(schema.collections)) {
        const table = tableName({ projection: schema.projection, generation }, collection);
        this.#conn.stmt('DELETE FROM table_commits WHERE name = ?').run(table);
        this.#conn.stmt('DELETE FROM counted_fields WHERE name = ?').run(table);
      }
    }).immediate();
    this.#conn.forgetStatements();
    this.#forgetTables(Object.keys(schema.collections).map((collection) => tableName({ projection: schema.projection, generation }, collection)));
    // The dropped tables' pages go back to the file system (files made with auto_vacuum = INCREMENTAL), so
    // the file does not keep the size of two generations after every rebuild.
    this.#conn.db.pragma('incremental_vacuum');
  }

  async getGeneration(projection: string, generation: number): Promise<GenerationRecord | null> {
    const row = this.#conn.stmt('SELECT * FROM projection_generations WHERE projection = ? AND generation = ?').get(projection, generation) as GenerationRow | undefined;
    return row ? toGenerationRecord(row) : null;
  }

  async listGenerations(projection?: string): Promise<GenerationRecord[]> {
    const rows = (projection === undefined
      ? this.#conn.stmt('SELECT * FROM projection_generations ORDER BY projection, generation').all()
      : this.#conn.stmt('SELECT * FROM projection_generations WHERE projection = ? ORDER BY generation').all(projection)) as GenerationRow[];
    return rows.map(toGenerationRecord);
  }

  async activeGeneration(projection: string): Promise<number | null> {
    return this.#activeNow(projection);
  }

  async setFailure(target: ModelTarget, failure: ProjectionFailure | null, now: string): Promise<void> {
    const json = failure ? JSON.stringify({ ...failure, position: encodePosition(failure.position) }) : null;
    this.#conn.stmt('UPDATE projection_generations SET failure = ?, updated_at = ? WHERE projection = ? AND generation = ?').run(json, now, target.projection, target.generation);
  }

  async addSkip(skip: SkipRecord): Promise<void> {
    this.#conn.stmt(
      `INSERT INTO projection_skips (projection, event_id, position, reason, actor, skipped_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ).run(skip.projection, skip.eventId, encodePosition(skip.position), skip.reason, skip.actor, skip.skippedAt);
  }

  async listSkips(projection: string): Promise<SkipRecord[]> {
    const rows = this.#conn.stmt('SELECT * FROM projection_skips WHERE projection = ? ORDER BY position').all(projection) as Array<{
      projection: string; event_id: string; position: string; reason: string; actor: string; skipped_at: string;
    }>;
    return rows.map((r) => ({ projection: r.projection, eventId: r.event_id, position: decodePosition(r.position), reason: r.reason, actor: r.actor, skippedAt: r.skipped_at }));
  }

  #activeNow(projection: string): number | null {
    const row = this.#conn.stmt(`SELECT generation FROM projection_generations WHERE projection = ? AND state = 'active'`).get(projection) as { generation: number } | undefined;
    return row ? Number(row.generation) : null;
  }
}

/** A value compared with a field, as SQLite binds it: json_extract yields 1/0 for JSON booleans. */
function toGenerationRecord(row: GenerationRow): GenerationRecord {
  const failure = row.failure ? (JSON.parse(row.failure) as ProjectionFailure & { position: string }) : null;
  return {
    projection: row.projection,
    generation: Number(row.generation),
    version: Number(row.version),
    state: row.state,
    checkpoint: decodeNullablePosition(row.checkpoint),
    failure: failure ? { ...failure, position: decodePosition(failure.position) } : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
