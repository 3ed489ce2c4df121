import sharp from 'sharp';
import type { Logger } from '../../src/logging/logger.ts';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';

export const PASSWORD = 'correct horse battery staple';

/** A PNG of the given size (random-ish pixels so it does not compress to nothing). */
export async function png(width: number, height: number, seed = 1): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let x = seed * 2654435761;
  for (let i = 0; i < raw.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    raw[i] = i % 7 === 0 ? x >>> 24 : (i * 31) & 0xff;
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

/** A two-frame GIF (frames differ, or the encoder would merge them). */
export async function animatedGif(): Promise<Buffer> {
  const red = await sharp({ create: { width: 4, height: 8, channels: 3, background: 'red' } }).png().toBuffer();
  const blue = await sharp({ create: { width: 4, height: 8, channels: 3, background: 'blue' } }).png().toBuffer();
  return sharp([red, blue], { join: { animated: true } }).gif().toBuffer();
}

export async function jpeg(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 80, b: 20 } } }).jpeg().toBuffer();
}

export interface Response {
  status: number;
  body: any;
  headers: Headers;
}

/** POST /admin/v1/media as multipart/form-data, the file in the field "file". */
export async function uploadMultipart(
  f: AdminFixture,
  bytes: Uint8Array,
  options: { fileName?: string; type?: string; fields?: Record<string, string>; token?: string; headers?: Record<string, string>; field?: string } = {},
): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(options.fields ?? {})) form.append(name, value);
  form.append(options.field ?? 'file', new Blob([bytes], { type: options.type ?? 'application/octet-stream' }), options.fileName ?? 'upload.bin');
  const response = await fetch(`${f.service.url}/admin/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.token ?? f.project.agentKey.key}`, ...options.headers },
    body: form,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
}

/** The asset's URL on the project-pinned public base. */
export function pinnedUrl(f: AdminFixture, assetId: string): string {
  return `${f.service.url}/public/p/${f.project.projectId}/v1/media/${assetId}`;
}

/** The asset's URL on the host-resolved public base (resolved here through the project's public key). */
export function hostUrl(f: AdminFixture, assetId: string): string {
  return `${f.service.url}/public/v1/media/${assetId}`;
}

export async function startMediaFixture(env: Record<string, string> = {}, dataDir?: string, logger?: Logger): Promise<AdminFixture> {
  return startAdminFixture({ env, ...(dataDir ? { dataDir } : {}), ...(logger ? { logger } : {}) });
}
