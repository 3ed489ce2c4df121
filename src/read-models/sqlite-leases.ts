/**
 * The SQLite read-model store's leases (projection_leases): which process folds a generation, until when.
 */
import type { LoopConnection } from './sqlite-loop-connection.ts';
import type { LeaseRecord, ModelTarget } from './read-model-store.ts';

export class SqliteLeases {
  readonly #conn: LoopConnection;

  constructor(conn: LoopConnection) {
    this.#conn = conn;
  }

  async acquireLease(target: ModelTarget, holder: string, now: string, ttlMs: number, options: { takeOverFrom?: string } = {}): Promise<boolean> {
    const expiresAt = new Date(Date.parse(now) + ttlMs).toISOString();
    // One statement: the write lock makes it atomic across processes.
    const info = this.#conn.stmt(
      `INSERT INTO projection_leases (projection, generation, holder, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (projection, generation) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE projection_leases.holder IN (excluded.holder, ?) OR projection_leases.expires_at <= ?`,
    ).run(target.projection, target.generation, holder, expiresAt, options.takeOverFrom ?? holder, now);
    return info.changes > 0;
  }

  async releaseLease(target: ModelTarget, holder: string): Promise<void> {
    this.#conn.stmt('DELETE FROM projection_leases WHERE projection = ? AND generation = ? AND holder = ?').run(target.projection, target.generation, holder);
  }

  async getLease(target: ModelTarget): Promise<LeaseRecord | null> {
    const row = this.#conn.stmt('SELECT holder, expires_at FROM projection_leases WHERE projection = ? AND generation = ?').get(target.projection, target.generation) as
      | { holder: string; expires_at: string }
      | undefined;
    return row ? { holder: row.holder, expiresAt: row.expires_at } : null;
  }
}
