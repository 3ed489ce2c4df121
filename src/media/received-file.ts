import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MediaTooLargeError } from './media-errors.ts';

/** An upload's bytes in a temporary file, with what was learned while writing them. */
export interface ReceivedFile {
  path: string;
  size: number;
  /** Lower-case hex SHA-256. */
  sha256: string;
}

/** The folder of this process under the system temp dir that holds every service's upload folder. */
export function uploadTempRoot(): string {
  return path.join(os.tmpdir(), `annals-uploads-${process.pid}`);
}

/**
 * A new folder where uploads wait between arriving and being stored (one per service instance, under
 * uploadTempRoot; the service removes it when it stops).
 */
export async function uploadTempDir(): Promise<string> {
  const root = uploadTempRoot();
  for (let attempt = 1; ; attempt++) {
    await fs.mkdir(root, { recursive: true, mode: 0o700 });
    try {
      return await fs.mkdtemp(path.join(root, 'service-'));
    } catch (error) {
      // Another service of this process removed the (then empty) root in between: make it again.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw error;
    }
  }
}

/** Removes a service's upload folder, and the process's root when no other service uses it. */
export async function removeUploadTempDir(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rmdir(path.dirname(dir)).catch(() => undefined);
}

/**
 * Streams `source` into a new temporary file in `dir`, hashing and counting as it goes; never holds more
 * than a chunk in memory. Past `maxBytes` it stops reading, removes the file and throws MediaTooLargeError.
 * On any failure the file is removed.
 */
export async function receiveStream(source: Readable, options: { dir: string; maxBytes: number; signal?: AbortSignal }): Promise<ReceivedFile> {
  const file = path.join(options.dir, `upload-${randomUUID()}`);
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > options.maxBytes) {
        callback(new MediaTooLargeError(options.maxBytes));
        return;
      }
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  try {
    const sink = createWriteStream(file, { flags: 'wx', mode: 0o600 });
    if (options.signal) await pipeline(source, meter, sink, { signal: options.signal });
    else await pipeline(source, meter, sink);
  } catch (error) {
    await fs.rm(file, { force: true });
    throw error;
  }
  return { path: file, size, sha256: hash.digest('hex') };
}

/** Writes bytes already in memory (a decoded base64 upload) to a temporary file. */
export async function receiveBytes(bytes: Uint8Array, options: { dir: string; maxBytes: number }): Promise<ReceivedFile> {
  if (bytes.byteLength > options.maxBytes) throw new MediaTooLargeError(options.maxBytes);
  const file = path.join(options.dir, `upload-${randomUUID()}`);
  await fs.writeFile(file, bytes, { flag: 'wx', mode: 0o600 });
  return { path: file, size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') };
}

export async function discard(file: { path: string } | undefined): Promise<void> {
  if (file) await fs.rm(file.path, { force: true });
}
