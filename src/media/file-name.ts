import { FILE_NAME_MAX } from '../domain/media/media-events.ts';

/**
 * A client's file name made safe to store and show: the last path segment only (either slash), Unicode
 * NFC, no control characters, trimmed, at most FILE_NAME_MAX characters (the extension kept), and
 * `fallback` when nothing is left.
 */
export function normaliseFileName(raw: string | undefined, fallback: string): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.normalize('NFC').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (clean === '' || clean === '.' || clean === '..') return fallback;
  if (clean.length <= FILE_NAME_MAX) return clean;
  const dot = clean.lastIndexOf('.');
  const extension = dot > 0 && clean.length - dot <= 16 ? clean.slice(dot) : '';
  return clean.slice(0, FILE_NAME_MAX - extension.length) + extension;
}
