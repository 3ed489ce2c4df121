import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { assertConsoleAccess } from '../../domain/access/sign-in.ts';
import { DomainError } from '../../domain/domain-error.ts';
import type { ReadModelReader } from '../../read-models/read-model-reader.ts';
import { isUuid } from '../admin/request-body.ts';
import { newRouter } from '../router.ts';
import { accessQueries } from '../../../projections/access-queries.ts';

/**
 * The web console (issue 18): the single-page app built from `console/` into `console/dist`, served at
 * /console. Hashed assets are immutable; every other path under /console answers the app's index.html
 * (client-side routes), which holds no admin data: the app reads everything through the admin API after
 * sign-in. Pages under /console/p/{projectId}/ belong to a project, whose console IP allowlist (Business
 * plan and above) the server enforces here as it does on every admin request of a session.
 */
export interface ConsoleRoutesOptions {
  /** The folder holding the built app (index.html and assets/). */
  distDir: string;
  reader: ReadModelReader;
}

/** No inline script or style; images from this origin or https (login logos, images in rich text); embeds only from the video players the editor previews. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob: https:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  'frame-src https://www.youtube-nocookie.com https://player.vimeo.com',
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.map': 'application/json',
};

export function consoleRoutes(options: ConsoleRoutesOptions): Router {
  const accessModel = accessQueries(options.reader);
  // Strict: /console (redirected) and /console/ (the app) are different paths.
  const router = newRouter({ strict: true });
  const assetsDir = path.join(options.distDir, 'assets');
  let indexHtml: Buffer | undefined;
  const index = (): Buffer | undefined => {
    if (indexHtml) return indexHtml;
    try {
      indexHtml = fs.readFileSync(path.join(options.distDir, 'index.html'));
    } catch {
      return undefined;
    }
    return indexHtml;
  };

  // A browser opening the service's root or the admin base lands on the console; API clients keep their JSON 404.
  for (const entry of ['/', '/admin', '/admin/']) {
    router.get(entry, (ctx, next) => (wantsHtml(ctx) ? redirect(ctx, '/console/') : next()));
  }
  router.get('/console', (ctx) => redirect(ctx, '/console/'));

  // Assets are few and never change under their name: read and compressed once, then served from memory.
  const assets = new Map<string, { raw: Buffer; gzip: Buffer }>();
  const asset = async (name: string) => {
    if (!ASSET_NAME.test(name)) return undefined;
    const known = assets.get(name);
    if (known) return known;
    const raw = await fs.promises.readFile(path.join(assetsDir, name)).catch(() => undefined);
    if (!raw) return undefined;
    const loaded = { raw, gzip: zlib.gzipSync(raw, { level: 9 }) };
    assets.set(name, loaded);
    return loaded;
  };

  router.get('/console/assets/:name', async (ctx) => {
    const name = ctx.params['name'] ?? '';
    const found = await asset(name);
    if (!found) {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'Not found';
      return;
    }
    // File names carry a hash of their content: a changed file is a new name.
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.vary('Accept-Encoding');
    ctx.type = CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream';
    const gzip = ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
    if (gzip) ctx.set('Content-Encoding', 'gzip');
    ctx.body = gzip ? found.gzip : found.raw;
  });

  router.get(/^\/console\/.*/, async (ctx) => {
    setPageHeaders(ctx);
    const projectId = /^\/console\/p\/([^/]+)(?:\/|$)/.exec(ctx.path)?.[1];
    if (projectId && isUuid(projectId)) {
      const project = await accessModel.project(projectId);
      if (project) {
        try {
          assertConsoleAccess({ plan: project.plan, consoleIpAllowlist: project.ipAllowlist }, ctx.ip);
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          sendRefusalPage(ctx, error.message, error.hint);
          return;
        }
      }
    }
    const html = index();
    if (!html) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The console is not built: run `npm run build --workspace console` (npm install does it).';
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = html;
  });
  return router;
}

function wantsHtml(ctx: Context): boolean {
  return ctx.accepts('json', 'html') === 'html';
}

function redirect(ctx: Context, to: string): void {
  ctx.status = 302;
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(to);
}

function setPageHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', CONSOLE_CSP);
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
}

const REFUSAL_STYLE = [
  ':root{color-scheme:light dark;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK JP",sans-serif;line-height:1.5}',
  'body{margin:0;min-height:100vh;display:grid;place-items:center;background:#f4f5f7;color:#1d2330}',
  'main{box-sizing:border-box;max-width:34rem;width:calc(100% - 2rem);margin:1rem;padding:2rem;background:#fff;border:1px solid #d6d9e0;border-top:4px solid #b42318;border-radius:8px}',
  'h1{margin:0 0 .75rem;font-size:1.375rem}',
  'p{margin:.5rem 0}',
  '.hint{color:#4a5163}',
  'dl{margin:1.25rem 0 0;padding-top:1rem;border-top:1px solid #e3e5ea;display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}',
  'dt{color:#4a5163}',
  'dd{margin:0;font-family:ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere}',
  '@media (prefers-color-scheme:dark){body{background:#14171d;color:#e6e8ee}main{background:#1d2129;border-color:#343a46;border-top-color:#f97066}.hint,dt{color:#aab1c0}dl{border-color:#343a46}}',
].join('');

/** The refusal page carries its one inline style, admitted by its hash: nothing else may load or run. */
const REFUSAL_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(REFUSAL_STYLE).digest('base64')}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The page a browser gets when the project's console IP allowlist does not admit its address: what happened,
 * what to do, and the address the service saw (the one to add to the allowlist, or to check behind a proxy).
 */
function sendRefusalPage(ctx: Context, message: string, hint: string | undefined): void {
  const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  ctx.status = 403;
  ctx.set('Content-Security-Policy', REFUSAL_CSP);
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = '<!doctype html><html lang="en"><head><meta charset="utf-8">'
    + '<meta name="viewport" content="width=device-width, initial-scale=1">'
    + `<title>Console access refused</title><style>${REFUSAL_STYLE}</style></head><body><main>`
    + `<h1>Console access refused</h1><p>${escapeHtml(message)}</p>${hint ? `<p class="hint">${escapeHtml(hint)}</p>` : ''}`
    + `<dl><dt>Your address</dt><dd>${escapeHtml(ctx.ip || 'unknown')}</dd></dl>`
    + '</main></body></html>';
}
