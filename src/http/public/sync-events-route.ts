import { PassThrough } from 'node:stream';
import type { Router } from '@koa/router';
import { PUBLIC_CONTENT } from '../../../projections/public-content-queries.ts';
import { rateLimited, unavailable } from '../errors/error-factory.ts';
import type { PublicContentDeps } from './public-content-deps.ts';
import { cursorOf, syncItemsOf, syncRequest } from './sync-route.ts';

/** Changes read per query while a stream catches up. */
const PAGE = 100;
/** What a browser's EventSource waits before it connects again (ms), sent first. */
const RECONNECT_MS = 3000;

/**
 * GET /sync/events: the sync feed (see sync-route.ts) as Server-Sent Events, for sites that follow changes as
 * they happen and for live preview. The stream starts after the cursor (`Last-Event-ID`, as an EventSource sends
 * it when it reconnects, else `cursor`; from the beginning without either), sends what is already there, then
 * each change as the public-content read model commits it: `event:` the item's type (entry, entry.removed, master,
 * master.removed), `data:` its JSON as GET /sync gives it, `id:` the cursor after it, so a reconnect resumes where
 * the stream broke. A comment line every SYNC_HEARTBEAT_MS keeps proxies from closing a quiet stream.
 *
 * Bounded: SYNC_STREAMS_PER_CLIENT streams per client address (429 beyond), SYNC_STREAMS_MAX in all (503
 * beyond). Streams end when the process starts shutting down (clients reconnect to another instance), and their
 * writes wait for the client to read (a slow client is not buffered without end).
 */
export function syncEventsRoute(router: Router, deps: PublicContentDeps): void {
  const { publicContent, syncStreams: limits } = deps;
  const perClient = new Map<string, number>();
  let open = 0;

  router.get('/sync/events', async (ctx) => {
    const lastEventId = ctx.get('Last-Event-ID') || undefined;
    const { target, locale, scope, after: start } = await syncRequest(ctx, deps, lastEventId);
    const client = ctx.ip;
    if ((perClient.get(client) ?? 0) >= limits.perClient) {
      throw rateLimited(RECONNECT_MS / 1000, { message: `At most ${limits.perClient} event streams of the sync feed per client at once.`, hint: 'Close a stream, or follow the feed with GET /sync.' });
    }
    if (open >= limits.max) throw unavailable('This instance holds as many event streams as it may.', { retryAfterSeconds: RECONNECT_MS / 1000 });
    perClient.set(client, (perClient.get(client) ?? 0) + 1);
    open++;

    const stream = new PassThrough();
    let closed = false;
    let wake: (() => void) | undefined;
    let changed = true;
    const rouse = () => {
      changed = true;
      wake?.();
    };
    const stopListening = deps.versions.onChange((change) => {
      if (change.projection === PUBLIC_CONTENT) rouse();
    });
    const close = () => {
      if (closed) return;
      closed = true;
      wake?.();
    };
    const stopDraining = deps.drain?.onBegin(close) ?? (() => {});
    // The client went away (or the response ended): the connection's end, not the request's.
    ctx.res.once('close', close);
    stream.once('close', close);

    ctx.status = 200;
    ctx.type = 'text/event-stream; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    // Nginx and its kind buffer responses unless told not to.
    ctx.set('X-Accel-Buffering', 'no');
    ctx.req.socket.setNoDelay(true);
    ctx.body = stream;

    const write = async (text: string) => {
      if (!stream.write(text)) await new Promise<void>((resolve) => {
        const done = () => {
          stream.off('drain', done);
          stream.off('close', done);
          resolve();
        };
        stream.once('drain', done);
        stream.once('close', done);
      });
    };

    void (async () => {
      let after = start;
      try {
        await write(`retry: ${RECONNECT_MS}\n\n`);
        while (!closed) {
          if (changed) {
            changed = false;
            for (;;) {
              const changes = await publicContent.syncPage(scope, after, PAGE);
              const items = await syncItemsOf(publicContent, target, locale, changes);
              for (const [i, change] of changes.entries()) {
                if (closed) return;
                const item = items[i]!;
                after = change.seq;
                await write(`id: ${cursorOf(change.seq)}\nevent: ${item.type}\ndata: ${item.json}\n\n`);
              }
              if (changes.length < PAGE) break;
            }
            continue;
          }
          const heartbeat = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(true), limits.heartbeatMs);
            wake = () => {
              clearTimeout(timer);
              resolve(false);
            };
            if (closed || changed) wake();
          });
          wake = undefined;
          if (heartbeat && !closed) await write(': heartbeat\n\n');
        }
      } catch (error) {
        deps.logger.warn({ err: error, projectId: target.projectId }, 'sync event stream ended by an error');
      } finally {
        stopListening();
        stopDraining();
        open--;
        const left = (perClient.get(client) ?? 1) - 1;
        if (left <= 0) perClient.delete(client);
        else perClient.set(client, left);
        stream.end();
      }
    })();
  });
}
