import type { Context } from 'koa';
import type { ProjectDoc } from '../../../projections/access.ts';
import { notFound } from '../errors/error-factory.ts';

/** The project a public request addresses, and the base it came in on. */
export interface PublicProject {
  projectId: string;
  /** The access read model's project document. */
  project: ProjectDoc;
  /**
   * Absolute URL of the base the request used, without trailing slash: `https://example.com/public/v1` on the
   * host-resolved base, `http://127.0.0.1:8080/public/p/<projectId>/v1` on the project-pinned one. Every URL a
   * response carries (mediaUrls, Location, llms.txt links) is built on it, so clients stay on the base they use.
   */
  baseUrl: string;
  /**
   * Base of the media URLs a response hands out (mediaUrls, og:image, JSON-LD image). They must load as they are
   * in a browser, whose `<img src>` sends no key: on the key-resolved base they are on the project-pinned base;
   * otherwise on `baseUrl`.
   */
  mediaBaseUrl: string;
  /** How the project was found. */
  resolvedBy: 'path' | 'public-key' | 'host';
}

interface PublicState {
  publicProject?: PublicProject;
  cacheScopes?: readonly string[];
}

/**
 * The parts of the public-content read model a response is made of (scopes of changedScopes in
 * projections/public-content.ts): the response cache keeps it until one of them changes. A response that
 * names none is dropped on any content change.
 */
export function setCacheScopes(ctx: Context, scopes: readonly string[]): void {
  (ctx.state as PublicState).cacheScopes = scopes;
}

export function cacheScopesOf(ctx: Context): readonly string[] {
  return (ctx.state as PublicState).cacheScopes ?? ['content'];
}

export function setPublicProject(ctx: Context, project: PublicProject): void {
  (ctx.state as PublicState).publicProject = project;
}

/**
 * The request's project; only routes mounted by publicRouter have one. Fails closed: a request that reached a
 * handler without its project resolved (a routing mistake) is answered 404, never served for no project.
 */
export function publicProjectOf(ctx: Context): PublicProject {
  const project = (ctx.state as PublicState).publicProject;
  if (!project) throw notFound(`No route for ${ctx.method} ${ctx.path}.`);
  return project;
}
