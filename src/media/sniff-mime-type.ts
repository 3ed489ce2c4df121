import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { fileTypeFromFile } from 'file-type';

const HEAD_BYTES = 8192;
/** An SVG document: optional XML declaration, comments, processing instructions and doctype, then the svg root element. */
const SVG_ROOT = /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:(?:<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>)\s*)*<svg[\s/>]/i;

/**
 * The MIME type of a file, from its bytes only (the client's claim is never used): file-type's signatures;
 * else SVG (an XML or text document whose root element is svg); else text/plain for valid UTF-8 without NUL
 * bytes; else application/octet-stream.
 */
export async function sniffMimeType(file: string): Promise<string> {
  const detected = await fileTypeFromFile(file);
  if (detected && detected.mime !== 'application/xml') return detected.mime;
  if (await isSvg(file)) return 'image/svg+xml';
  if (detected) return detected.mime;
  return (await isUtf8Text(file)) ? 'text/plain' : 'application/octet-stream';
}

async function isSvg(file: string): Promise<boolean> {
  const handle = await fs.open(file, 'r');
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    return SVG_ROOT.test(new TextDecoder('utf-8').decode(buffer.subarray(0, bytesRead)));
  } finally {
    await handle.close();
  }
}

/** Streams the whole file through a strict UTF-8 decoder: true when it decodes and holds no NUL byte. */
async function isUtf8Text(file: string): Promise<boolean> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: 64 * 1024 })) {
      const bytes = chunk as Buffer;
      if (bytes.includes(0)) return false;
      decoder.decode(bytes, { stream: true });
    }
    decoder.decode();
    return true;
  } catch (error) {
    if (error instanceof TypeError) return false;
    throw error;
  }
}
