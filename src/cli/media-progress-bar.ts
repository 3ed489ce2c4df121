import { Presets, SingleBar } from 'cli-progress';
import type { MediaProgress } from '../media/media-transfer.ts';

const STEPS = 10_000;

/** A progress bar for copying or verifying media: share done, assets, bytes read, MB/s and ETA. */
export class MediaProgressBar {
  readonly #bar: SingleBar;
  readonly #started = performance.now();
  #running = false;

  constructor(name: string, stream: NodeJS.WriteStream) {
    this.#bar = new SingleBar(
      {
        stream,
        format: `${name.padEnd(13)} [{bar}] {percentage}% | {assetsDone}/{assets} assets | {read} read | {rate}/s | ETA {eta_formatted}`,
        etaBuffer: 50,
        fps: 5,
        noTTYOutput: true,
        notTTYSchedule: 5000,
        hideCursor: true,
      },
      Presets.shades_classic,
    );
  }

  update(progress: MediaProgress): void {
    const seconds = (performance.now() - this.#started) / 1000;
    const payload = {
      assetsDone: progress.assetsDone,
      assets: progress.assets,
      read: megabytes(progress.bytesDone),
      rate: megabytes(seconds > 0 ? progress.bytesDone / seconds : 0),
    };
    const value = Math.round(progress.fraction * STEPS);
    if (this.#running) this.#bar.update(value, payload);
    else {
      this.#bar.start(STEPS, value, payload);
      this.#running = true;
    }
  }

  stop(): void {
    if (this.#running) this.#bar.stop();
    this.#running = false;
  }
}

export function megabytes(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`;
}
