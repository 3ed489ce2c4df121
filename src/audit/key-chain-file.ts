/**
 * The key chain (./key-chain.ts) as a file outside DATA_DIR (AUDIT_KEY_CHAIN_FILE): NDJSON, one announcement
 * per line, oldest first. It holds public keys and signatures only; its integrity is its signatures, not its
 * permissions: a line removed, changed or added without the previous key's signature makes it fail to
 * verify, and every process that signs then refuses to (loudly) rather than sign with a key it cannot vouch
 * for.
 *
 * Written twice in its life at most per key: created with its first announcements (a mode-0644 file, linked
 * into place only when complete), then one line appended per rotation (one write, then fsync). Readers look
 * at the file's identity, size and modification time before each use and read it again when they changed,
 * so a rotation reaches every running process at its next signature.
 */
import fs from 'node:fs';
import path from 'node:path';
import { KeyChain, KeyChainError, type KeyAnnouncement } from './key-chain.ts';

const CHAIN_FILE_MODE = 0o644;

/** Another process created the chain first: read it. */
export class KeyChainExistsError extends Error {
  override name = 'KeyChainExistsError';
}

export class KeyChainFile {
  #cached: { stamp: string; chain: KeyChain } | undefined;

  constructor(readonly file: string) {}

  get description(): string {
    return `the key chain ${this.file}`;
  }

  /** The verified chain, read again only when the file changed; null when there is no file. */
  readIfExists(): KeyChain | null {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.#cached = undefined;
        return null;
      }
      throw error;
    }
    const stamp = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    if (this.#cached?.stamp === stamp) return this.#cached.chain;
    const chain = this.#parse(fs.readFileSync(this.file, 'utf8'));
    this.#cached = { stamp, chain };
    return chain;
  }

  /** The verified chain; KeyChainError when the file is missing or does not verify. */
  read(): KeyChain {
    const chain = this.readIfExists();
    if (!chain) throw new KeyChainError(`${this.description} is missing: it lists every audit key with its validity; restore it from a backup (docs/operations.md "The tamper-evident log")`);
    return chain;
  }

  /** Creates the file with these announcements; KeyChainExistsError when it exists already. */
  create(announcements: readonly KeyAnnouncement[]): KeyChain {
    const chain = KeyChain.verify(announcements);
    const temporary = path.join(path.dirname(this.file), `.${path.basename(this.file)}.${process.pid}.partial`);
    const descriptor = fs.openSync(temporary, 'w', CHAIN_FILE_MODE);
    try {
      fs.writeSync(descriptor, announcements.map((a) => `${JSON.stringify(a)}\n`).join(''));
      fs.fsyncSync(descriptor);
    } finally {
      fs.closeSync(descriptor);
    }
    try {
      fs.linkSync(temporary, this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new KeyChainExistsError(`${this.description} exists already`);
      throw error;
    } finally {
      fs.rmSync(temporary, { force: true });
    }
    syncFolder(path.dirname(this.file));
    return chain;
  }

  /**
   * Appends one announcement, which must continue `chain` (the chain as read just before): KeyChainError
   * when the file changed meanwhile or the announcement does not verify after it.
   */
  append(chain: KeyChain, announcement: KeyAnnouncement): KeyChain {
    const extended = chain.extendedWith(announcement);
    const descriptor = fs.openSync(this.file, 'r+');
    try {
      const text = fs.readFileSync(descriptor, 'utf8');
      const now = this.#parse(text);
      if (now.entries.length !== chain.entries.length || !now.isPrefixOf(chain)) throw new KeyChainError(`${this.description} changed while the new key was being announced: run the rotation again`);
      fs.writeSync(descriptor, `${JSON.stringify(announcement)}\n`, Buffer.byteLength(text));
      fs.fsyncSync(descriptor);
    } finally {
      fs.closeSync(descriptor);
    }
    return extended;
  }

  #parse(text: string): KeyChain {
    if (text.length > 0 && !text.endsWith('\n')) throw new KeyChainError(`${this.description} ends with an incomplete line (an interrupted write): restore the file from a backup`);
    const announcements = text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line, i) => {
        try {
          return JSON.parse(line) as unknown;
        } catch {
          throw new KeyChainError(`${this.description}: line ${i + 1} is not JSON`);
        }
      });
    try {
      return KeyChain.verify(announcements);
    } catch (error) {
      if (error instanceof KeyChainError) throw new KeyChainError(`${this.description}: ${error.message}`);
      throw error;
    }
  }
}

function syncFolder(folder: string): void {
  const descriptor = fs.openSync(folder, 'r');
  try {
    fs.fsyncSync(descriptor);
  } catch {
    // Some file systems cannot sync a folder; the file itself was synced.
  } finally {
    fs.closeSync(descriptor);
  }
}
