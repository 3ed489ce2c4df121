import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { assertConsoleAccess } from '../../domain/access/sign-in.ts';
import { DomainError } from '../../domain/domain-error.ts';
import type { ReadModelReader } from '../../read-models/read-model-reader.ts';
import type { ProjectDoc } from '../admin/admin-context.ts';
import { isUuid } from '../admin/request-body.ts';
import { newRouter } from '../router.ts';

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
      const project = await options.reader.get<ProjectDoc & Record<string, unknown>>('access', 'projects', projectId);
      if (project) {
        try {
          assertConsoleAccess({ plan: project.plan, consoleIpAllowlist: project.ipAllowlist }, ctx.ip);
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          ctx.status = 403;
          ctx.type = 'text/html; charset=utf-8';
          ctx.body = refusalPage(error.message, error.hint);
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

function refusalPage(message: string, hint: string | undefined): string {
  const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console access refused</title></head><body><main><h1>Console access refused</h1><p>${escape(message)}</p>${hint ? `<p>${escape(hint)}</p>` : ''}</main></body></html>`;
}
