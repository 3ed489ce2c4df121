import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';
import { KEY_REPLAY_WINDOW_MS, replayKeyId } from './issued-key-replay.ts';

/** How often the job looks for data keys whose window has ended: a key's replay outlives its window by at most this. */
export const REPLAY_KEY_SHRED_INTERVAL_MS = 10 * 60 * 1000;
/** Keys issued this long before the previous run's cut-off are looked at again (clocks of several processes, a lagging read model). */
const OVERLAP_MS = 60 * 60 * 1000;
const PAGE = 500;
const KEY_COLLECTIONS = ['agent_keys_by_id', 'public_keys_by_id'] as const;

/**
 * Destroys the data keys of issued keys' replays (IssuedKeyReplay) once their window has ended, so that a key
 * nobody resent does not stay readable in the key store (projector role, every REPLAY_KEY_SHRED_INTERVAL_MS).
 *
 * It finds them through the access read model's keys by createdAt (index by_created), not the log: a run looks
 * at keys issued between the previous run's cut-off (less an overlap) and now less the window, and destroys the
 * data keys the key store holds for them (one getMany per page of 500; keys issued without an idempotency key
 * have none). The first run of a process looks at every key older than the window, which makes the job survive
 * a restart, however long the service was down, at the cost of one pass over the keys per start. Destroying is
 * idempotent, so runs of several processes, or a run that overlaps the previous one, do no harm.
 */
export class ReplayKeyShredder {
  readonly #delay = new InterruptibleDelay();
  #running: Promise<void> | undefined;
  #stopped = false;
  /** Keys issued before this were looked at by an earlier run of this process. */
  #since: string | undefined;

  constructor(private readonly deps: { reader: ReadModelReader; keyStore: KeyStore; clock: Clock; logger: Logger; intervalMs?: number }) {}

  start(): void {
    this.#running ??= (async () => {
      while (!this.#stopped) {
        await this.runOnce().catch((error: unknown) => this.deps.logger.error({ err: error }, 'destroying the data keys of ended key replays failed; retrying next interval'));
        await this.#delay.sleep(this.deps.intervalMs ?? REPLAY_KEY_SHRED_INTERVAL_MS);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#delay.interrupt();
    await this.#running;
  }

  /** Destroys every data key whose window has ended; returns how many it destroyed. */
  async runOnce(): Promise<number> {
    const cutoff = new Date(this.deps.clock.now().getTime() - KEY_REPLAY_WINDOW_MS).toISOString();
    let destroyed = 0;
    for (const collection of KEY_COLLECTIONS) {
      // Keyset from (since, ''): every key issued at `since` or later, in createdAt order.
      let after: { values: string[]; id: string } | undefined = this.#since === undefined ? undefined : { values: [this.#since], id: '' };
      for (;;) {
        const page = await this.deps.reader.findWithIds('access', collection, {
          filter: { createdAt: { $lte: cutoff } },
          sort: [['createdAt', 'asc']],
          limit: PAGE,
          fields: ['createdAt'],
          ...(after ? { after } : {}),
        });
        const held = await this.deps.keyStore.getMany(page.map((entry) => replayKeyId(entry.id)));
        for (const id of held.keys()) {
          await this.deps.keyStore.destroy(id);
          destroyed++;
        }
        if (page.length < PAGE) break;
        const last = page[page.length - 1]!;
        after = { values: [String(last.doc['createdAt'])], id: last.id };
      }
    }
    this.#since = new Date(Date.parse(cutoff) - OVERLAP_MS).toISOString();
    if (destroyed > 0) this.deps.logger.info({ destroyed }, 'key replays ended: their data keys destroyed');
    return destroyed;
  }
}
