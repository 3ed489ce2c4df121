import { useQuery } from '@tanstack/react-query';
import { ApiError, type ConsoleClient } from '../api/admin-client.ts';
import type { AdminSchema } from '@annals/client';
import { useProject } from '../shell/project-context.tsx';

/**
 * The entry editor's working copy on the server (GET/PUT/DELETE /entries/{id}/working-copy): what the user typed
 * and has not saved as a revision, kept at every pause in typing instead of a revision, and offered back when
 * the entry opens again on any device. Others' working copies of the same entry (who, since when) are the
 * editor's notice that someone else is editing.
 */
export type WorkingCopy = AdminSchema<'WorkingCopy'>;
export type WorkingCopyHead = AdminSchema<'WorkingCopyHead'>;

/** How often an open editor looks for others' unsaved typing in its entry. */
export const OTHERS_POLL_MS = 20_000;

/**
 * The user's own working copy of the entry, or null (read once, when the editor opens); not asked (`enabled`
 * false) of a role that does not write the entry, which keeps none.
 */
export function useOwnWorkingCopy(entryId: string, enabled = true) {
  const { api, projectId } = useProject();
  return useQuery({
    queryKey: [projectId, 'working-copy', entryId],
    queryFn: () => ownWorkingCopy(api, entryId),
    staleTime: Infinity,
    gcTime: 0,
    enabled,
  });
}

export async function ownWorkingCopy(api: ConsoleClient, entryId: string): Promise<WorkingCopy | null> {
  try {
    return await api.GET('/entries/{entryId}/working-copy', { params: { path: { entryId } } });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

/** Others' working copies of the entry, polled while the editor is open (never the user's own). */
export function useOthersWorkingCopies(entryId: string, userId: string): WorkingCopyHead[] {
  const { api, projectId } = useProject();
  const copies = useQuery({
    queryKey: [projectId, 'working-copies', entryId],
    queryFn: () => api.GET('/entries/{entryId}/working-copies', { params: { path: { entryId } } }),
    refetchInterval: OTHERS_POLL_MS,
    refetchOnWindowFocus: true,
  });
  return (copies.data?.items ?? []).filter((copy) => !(copy.owner.type === 'user' && copy.owner.id === userId));
}

/** The values of revision number `revision` of the entry, or null when it cannot be found among the last 100. */
export async function revisionValues(api: ConsoleClient, entryId: string, revision: number): Promise<Record<string, unknown> | null> {
  const page = await api.GET('/entries/{entryId}/revisions', { params: { path: { entryId }, query: { order: 'desc', limit: 100 } } });
  const found = page.items.find((item) => item.revision === revision);
  if (!found) return null;
  const full = await api.GET('/revisions/{revisionId}', { params: { path: { revisionId: found.revisionId } } });
  return (full.snapshot ?? {}) as Record<string, unknown>;
}
