import path from 'node:path';
import type { EventRow } from './sqlite-event-rows.ts';

/**
 * Wakes live subscriptions in this process when an event is appended to the same database file, so they
 * need not wait for their next poll. This process's own appends come with their rows (the events as stored,
 * their data and metadata as JSON text), so that a subscription that has read everything before them takes
 * them from here instead of querying the log once per subscription; appends by other processes are found by
 * polling, and wake the subscriptions without rows.
 */
export class AppendNotifier {
  static readonly #byFile = new Map<string, AppendNotifier>();
  readonly #listeners = new Set<(rows?: readonly EventRow[]) => void>();

  static for(file: string): AppendNotifier {
    const key = path.resolve(file);
    let notifier = AppendNotifier.#byFile.get(key);
    if (!notifier) {
      notifier = new AppendNotifier();
      AppendNotifier.#byFile.set(key, notifier);
    }
    return notifier;
  }

  listen(listener: (rows?: readonly EventRow[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Something was appended: the rows of a commit of this process, in position order, or none (another's). */
  notify(rows?: readonly EventRow[]): void {
    for (const listener of this.#listeners) listener(rows);
  }
}
