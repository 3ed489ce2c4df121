import { useQuery } from '@tanstack/react-query';
import { useProject } from '../shell/project-context.tsx';
import { useI18n } from '../i18n/i18n.tsx';
import type { Actor } from '../api/shapes.ts';
import { en, type MessageKey } from '../i18n/en.ts';

/** The tenant's users, and names for user ids: their e-mail. */
export function useUserNames() {
  const { api } = useProject();
  const users = useQuery({ queryKey: ['users'], queryFn: () => api.GET('/users'), staleTime: 60_000 });
  const byId = new Map(users.data?.items.map((u) => [u.id, u.email]));
  return { userName: (userId: string) => byId.get(userId) ?? userId, users: users.data?.items ?? [] };
}

/**
 * What an event did, in the UI language (an event type the console does not know is named as one); a save that
 * restored an older revision says which.
 */
export function useEventName() {
  const { t } = useI18n();
  return (item: { type: string; kind: string; restoredFrom?: { revision: number } | null }) => {
    if (item.restoredFrom) return t('history.restoredFrom', { revision: item.restoredFrom.revision });
    const key = `event.${item.type}`;
    return key in en ? t(key as MessageKey) : t('event.other', { type: item.type });
  };
}

/** Names for actors: users by e-mail; agent keys and operators by id. */
export function useActorName() {
  const { t } = useI18n();
  const { userName } = useUserNames();
  return (actor: Actor | null | undefined) => {
    if (!actor) return '';
    if (actor.type === 'user') return userName(actor.id);
    if (actor.type === 'agent') return t('history.agent', { id: actor.id.slice(0, 8) });
    return t('history.operator', { id: actor.id });
  };
}
