import { SingleBar, Presets } from 'cli-progress';
import type { RebuildProgress } from '../projection-engine/rebuild.ts';

const STEPS = 10_000;

/** A progress bar for one rebuild: share of the log replayed, events folded, events/s and ETA. */
export class RebuildProgressBar {
  readonly #bar: SingleBar;
  readonly #started = performance.now();
  #running = false;

  constructor(name: string, stream: NodeJS.WriteStream) {
    this.#bar = new SingleBar(
      {
        stream,
        format: `${name.padEnd(18)} [{bar}] {percentage}% | {events} events | {rate} events/s | ETA {eta_formatted}`,
        etaBuffer: 50,
        fps: 5,
        noTTYOutput: true,
        notTTYSchedule: 2000,
        hideCursor: true,
      },
      Presets.shades_classic,
    );
  }

  update(progress: RebuildProgress): void {
    if (!this.#running) {
      this.#bar.start(STEPS, 0, { events: 0, rate: 0 });
      this.#running = true;
    }
    const seconds = (performance.now() - this.#started) / 1000;
    this.#bar.update(Math.round(progress.fraction * STEPS), { events: progress.events, rate: seconds > 0 ? Math.round(progress.events / seconds) : 0 });
  }

  finish(events: number): void {
    this.update({ events, fraction: 1, checkpoint: null, head: null });
  }

  stop(): void {
    if (this.#running) this.#bar.stop();
    this.#running = false;
  }
}
