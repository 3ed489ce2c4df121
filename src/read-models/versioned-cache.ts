/**
 * Values read from a read model, kept while its version (ReadModelVersions) stays the same. Callers must
 * not mutate what they get. Least recently stored entries go first beyond `maxEntries`.
 */
export class VersionedCache<V> {
  readonly #entries = new Map<string, { version: string; value: V }>();

  constructor(
    private readonly versionOf: () => string,
    private readonly maxEntries = 10_000,
  ) {}

  async get(key: string, load: () => Promise<V>): Promise<V> {
    // The version before reading: a change during the read leaves this entry stale at once, never late.
    const version = this.versionOf();
    const hit = this.#entries.get(key);
    if (hit && hit.version === version) return hit.value;
    const value = await load();
    this.#entries.delete(key);
    this.#entries.set(key, { version, value });
    if (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    return value;
  }
}
