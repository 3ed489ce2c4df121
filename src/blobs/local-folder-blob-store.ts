import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import { constants, createWriteStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { syncFile } from '../fs/durable-files.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../data-dir/private-files.ts';
import { assertBlobKey, BlobRangeError, assertByteRange, exactLength, BlobStoreUnavailableError, type BlobRead, type BlobSource, type BlobStore, type ByteRange } from './blob-store.ts';

/**
 * Blobs as files under one folder (the embedded default: DATA_DIR/media), one file per key, private to the
 * service's user like everything in DATA_DIR (files 0600, folders 0700). A write goes
 * to a temporary file beside its target, is flushed to disk, then renamed over the target, so readers
 * see whole files only and a crash leaves at worst a temporary file (named `.incoming-*`, which no key can
 * name). Reads stream from an open file handle, so a blob deleted mid-read is still read whole.
 */
export class LocalFolderBlobStore implements BlobStore {
  readonly kind = 'local-folder';

  constructor(readonly root: string) {}

  async put(key: string, source: BlobSource, _options: { contentType: string }): Promise<void> {
    let temporary: string | undefined;
    try {
      const target = this.#pathOf(key);
      await fs.mkdir(path.dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
      temporary = path.join(path.dirname(target), `.incoming-${randomUUID()}`);
      if ('path' in source) {
        // A copy takes its source's mode: made private before it gets its name.
        await fs.copyFile(source.path, temporary, constants.COPYFILE_EXCL);
        await fs.chmod(temporary, PRIVATE_FILE_MODE);
      } else if ('bytes' in source) {
        await fs.writeFile(temporary, source.bytes, { flag: 'wx', mode: PRIVATE_FILE_MODE });
      } else {
        await pipeline(source.stream, exactLength(source.size, key), createWriteStream(temporary, { flags: 'wx', mode: PRIVATE_FILE_MODE }));
      }
      await syncFile(temporary);
      await fs.rename(temporary, target);
    } catch (error) {
      if ('stream' in source) source.stream.destroy();
      if (temporary) await fs.rm(temporary, { force: true });
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<BlobRead | null> {
    const file = this.#pathOf(key);
    if (range) assertByteRange(range);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      if (!range) return { body: handle.createReadStream({ autoClose: true }), size, length: size };
      if (range.start >= size) throw new BlobRangeError(`byte range ${range.start}-${range.end} starts beyond the blob's ${size} bytes`);
      const end = Math.min(range.end, size - 1);
      return { body: handle.createReadStream({ start: range.start, end, autoClose: true }), size, length: end - range.start + 1 };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    try {
      const stats = await fs.stat(this.#pathOf(key));
      return { size: stats.size };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.#pathOf(key), { force: true });
  }

  async ping(): Promise<void> {
    try {
      await fs.mkdir(this.root, { recursive: true, mode: PRIVATE_DIR_MODE });
      await fs.access(this.root, constants.R_OK | constants.W_OK);
    } catch (error) {
      throw new BlobStoreUnavailableError(`media folder ${this.root} is not writable`, { cause: error });
    }
  }

  async close(): Promise<void> {}

  #pathOf(key: string): string {
    assertBlobKey(key);
    return path.join(this.root, ...key.split('/'));
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
