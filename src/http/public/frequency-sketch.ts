/**
 * How often each key was asked for lately, estimated in fixed memory (a count-min sketch, as TinyLFU keeps
 * for cache admission): four rows of one-byte counters; a key's estimate is the least of its four counters, so
 * it can be too high (other keys share a counter) but never too low. Every `10 × width` additions all
 * counters are halved, so old popularity fades and a key that stopped being asked for stops counting.
 */
export class FrequencySketch {
  static readonly ROWS = 4;
  readonly #counters: Uint8Array;
  readonly #width: number;
  #additions = 0;

  /** `width`: counters per row, a power of two (memory: 4 × width bytes). */
  constructor(width = 1 << 16) {
    if (!Number.isInteger(Math.log2(width))) throw new RangeError(`width must be a power of two (got ${width})`);
    this.#width = width;
    this.#counters = new Uint8Array(FrequencySketch.ROWS * width);
  }

  /** Counts one more request for `key`; returns its estimate after it. */
  add(key: string): number {
    const hash = keyHash(key);
    let least = 255;
    for (let row = 0; row < FrequencySketch.ROWS; row++) {
      const slot = this.#slot(hash, row);
      const value = this.#counters[slot]!;
      if (value < 255) this.#counters[slot] = value + 1;
      least = Math.min(least, value < 255 ? value + 1 : 255);
    }
    if (++this.#additions >= 10 * this.#width) this.#halve();
    return least;
  }

  /** The estimate of how often `key` was asked for lately. */
  frequency(key: string): number {
    const hash = keyHash(key);
    let least = 255;
    for (let row = 0; row < FrequencySketch.ROWS; row++) least = Math.min(least, this.#counters[this.#slot(hash, row)]!);
    return least;
  }

  #slot(hash: number, row: number): number {
    // A different mix of the key's hash per row (murmur3's finaliser), so two keys rarely share all four.
    let x = Math.imul(hash ^ ROW_SEEDS[row]!, 0x85ebca6b);
    x ^= x >>> 13;
    x = Math.imul(x, 0xc2b2ae35);
    x ^= x >>> 16;
    return row * this.#width + (x & (this.#width - 1));
  }

  #halve(): void {
    for (let i = 0; i < this.#counters.length; i++) this.#counters[i] = this.#counters[i]! >>> 1;
    this.#additions = Math.floor(this.#additions / 2);
  }
}

const ROW_SEEDS = [0x9e3779b9, 0x7f4a7c15, 0x2545f491, 0x6c8e9cf5];

/** FNV-1a of a key's UTF-16 code units. */
function keyHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
