/**
 * How the embedded event log stores an event's data and metadata: one zstd frame of the data's JSON text, a
 * newline and the metadata's (JSON text never holds a raw newline, so the first one splits them), compressed
 * with a dictionary made for the shape of annals events (scripts/event-log-dictionary.ts).
 *
 * Events are small (a few hundred bytes) and many of their bytes are the same keys and envelope in every
 * event; compressed alone each would shrink to ~64%, with the dictionary (which holds no content) to ~38%
 * (10,000-entry seed: 35.7 MB of data and metadata to 13.6 MB; what is left is mostly ids, hashes and
 * content). Each event stays its own frame, read by position as before; reading one back costs ~1.4 µs.
 *
 * A frame names the dictionary it needs (zstd's dictionary id, in its header), so dictionaries can be added but
 * never changed or removed: the newest writes, every one ever used reads.
 */
import { Compressor } from 'zstd-napi';
import binding from 'zstd-napi/binding.js';
import { MAX_APPEND_BYTES } from './event-store.ts';
import { EVENT_LOG_DICTIONARY_32769 } from './event-log-dictionary-32769.ts';

/** Every dictionary frames were ever written with; the last one writes new frames. */
const DICTIONARIES = [EVENT_LOG_DICTIONARY_32769] as const;
const WRITING = DICTIONARIES[DICTIONARIES.length - 1]!;
/** zstd's level 3 (its default): level 1 is no faster here, 6 to 19 make no smaller frames of events this small. */
const LEVEL = 3;
const NEWLINE = 0x0a;

/** A frame that cannot be read back: damaged (its checksum or structure), or needing a dictionary this version does not know. */
export class UnreadableFrameError extends Error {
  override name = 'UnreadableFrameError';
}

/**
 * Writes and reads event frames. Holds zstd's contexts, reused (these calls are synchronous): writing through
 * zstd-napi's Compressor; reading through its low-level binding into one buffer kept between reads, which
 * spares an allocation per event (1.8 -> 1.4 µs an event on the 10,000-entry seed).
 */
export class EventFrames {
  readonly #compressor = new Compressor();
  readonly #decompressor = new binding.DCtx();
  readonly #dictionaries = new Map<number, binding.DDict>();
  #out = Buffer.allocUnsafe(16 * 1024);

  constructor() {
    // The checksum (4 bytes a frame) makes a damaged frame fail to read instead of reading as other text.
    this.#compressor.setParameters({ compressionLevel: LEVEL, checksumFlag: true });
    this.#compressor.loadDictionary(Buffer.from(WRITING.base64, 'base64'));
  }

  /** The frame of an event's data and metadata, given as their JSON texts. */
  write(data: string, metadata: string): Buffer {
    return this.#compressor.compress(Buffer.from(`${data}\n${metadata}`, 'utf8'));
  }

  /** The JSON texts of the data and metadata a frame holds. */
  read(frame: Uint8Array): { data: string; metadata: string } {
    const dictionary = this.#dictionary(frame);
    let size: number;
    try {
      const content = binding.getFrameContentSize(frame);
      // Frames are written whole, so their header says how much they hold; more than an append may hold (and the
      // newline) is damage.
      if (content === null || content > MAX_APPEND_BYTES + 1) throw new Error(content === null ? 'no content size' : `a content size of ${content} bytes`);
      if (content > this.#out.length) this.#out = Buffer.allocUnsafe(content);
      size = this.#decompressor.decompressUsingDDict(this.#out, frame, dictionary);
    } catch (error) {
      throw new UnreadableFrameError(`its frame is damaged (${(error as Error).message})`, { cause: error });
    }
    // A newline byte never occurs inside a UTF-8 sequence of another character, nor in JSON text.
    const split = this.#out.indexOf(NEWLINE);
    if (split < 0 || split >= size) throw new UnreadableFrameError('its frame holds no metadata');
    return { data: this.#out.toString('utf8', 0, split), metadata: this.#out.toString('utf8', split + 1, size) };
  }

  #dictionary(frame: Uint8Array): binding.DDict {
    let id: number;
    try {
      id = binding.getDictIDFromFrame(frame);
    } catch (error) {
      throw new UnreadableFrameError(`its frame is not a zstd frame (${(error as Error).message})`, { cause: error });
    }
    let dictionary = this.#dictionaries.get(id);
    if (!dictionary) {
      const known = DICTIONARIES.find((d) => d.id === id);
      if (!known) {
        throw new UnreadableFrameError(
          `its frame needs zstd dictionary ${id}, which this version of annals does not have (it has ${DICTIONARIES.map((d) => d.id).join(', ')}): was the log written by a newer version?`,
        );
      }
      dictionary = new binding.DDict(Buffer.from(known.base64, 'base64'));
      this.#dictionaries.set(id, dictionary);
    }
    return dictionary;
  }
}

/** The zstd dictionary id a frame names (0: none). */
export function dictionaryOf(frame: Uint8Array): number {
  return binding.getDictIDFromFrame(frame);
}
