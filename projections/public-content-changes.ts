import type { DocumentWrite } from '../src/read-models/read-model-store.ts';
import type { SiteVersionDoc } from './public-content-documents.ts';

/**
 * What a commit of the public-content projection changed, as scopes of public responses: `entry:<entryId>` (its views),
 * `form-set:<formSetId>` (its lists, primary entry and sitemap), `project:<projectId>` (its sitemap,
 * llms.txt and masters), and `content` for any change (responses that name no narrower scope). Every change
 * of a live entry also touches its form set and project (site_versions), so their outputs follow.
 */
export function changedScopes(writes: readonly DocumentWrite[]): Set<string> {
  const scopes = new Set<string>(['content']);
  for (const write of writes) {
    switch (write.collection) {
      case 'entry_views':
        scopes.add(`entry:${write.id.slice(0, write.id.lastIndexOf(':'))}`);
        break;
      case 'site_versions':
        // A deleted row names no scope: its id is a form set's or a project's.
        if ((write.doc as SiteVersionDoc | null)?.scope !== 'form-set') scopes.add(`project:${write.id}`);
        if ((write.doc as SiteVersionDoc | null)?.scope !== 'project') scopes.add(`form-set:${write.id}`);
        break;
      case 'live_counts':
        scopes.add(`form-set:${write.id}`);
        break;
      case 'form_sets': {
        // Its name heads a section of its project's llms.txt.
        scopes.add(`form-set:${write.id}`);
        const projectId = (write.doc as { projectId?: string } | null)?.projectId;
        if (projectId !== undefined) scopes.add(`project:${projectId}`);
        break;
      }
      case 'projects':
        scopes.add(`project:${write.id}`);
        break;
      case 'masters':
      case 'master_views': {
        // A master view is removed only when its locale is (an access change too, which empties the cache).
        const projectId = (write.doc as { projectId?: string } | null)?.projectId;
        if (projectId !== undefined) scopes.add(`project:${projectId}`);
        break;
      }
    }
  }
  return scopes;
}
