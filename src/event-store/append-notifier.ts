import path from 'node:path';

/**
 * Wakes live subscriptions in this process when an event is appended to the same database file,
 * so they need not wait for their next poll. Appends by other processes are found by polling.
 */
export class AppendNotifier {
  static readonly #byFile = new Map<string, AppendNotifier>();
  readonly #listeners = new Set<() => void>();

  static for(file: string): AppendNotifier {
    const key = path.resolve(file);
    let notifier = AppendNotifier.#byFile.get(key);
    if (!notifier) {
      notifier = new AppendNotifier();
      AppendNotifier.#byFile.set(key, notifier);
    }
    return notifier;
  }

  listen(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  notify(): void {
    for (const listener of this.#listeners) listener();
  }
}
