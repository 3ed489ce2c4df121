import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from './error-message.tsx';

/** Plans whose projects may assign entries (spec section 8: assignee, Business plan or above). */
const ASSIGNEE_PLANS = ['business', 'enterprise'];

/** Who reviews the entry: one of the tenant's users, or nobody; shown only, to a role that does not write the entry. */
export function AssigneeSelect({ entryId, assignee, onChanged, readOnly = false }: { entryId: string; assignee: string | null; onChanged: () => Promise<void>; readOnly?: boolean }) {
  const { t } = useI18n();
  const { api, project } = useProject();
  const users = useQuery({ queryKey: ['users'], queryFn: () => api.GET('/users'), staleTime: 60_000 });
  const [error, setError] = useState<unknown>(null);
  if (!ASSIGNEE_PLANS.includes(project.plan)) return null;
  const assign = async (userId: string) => {
    setError(null);
    try {
      await api.PUT('/entries/{entryId}/assignee', { params: { path: { entryId } }, body: { userId: userId || null } });
      await onChanged();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div className="assignee">
      <label>
        {t('list.col.assignee')}
        <select value={assignee ?? ''} disabled={readOnly} onChange={(e) => void assign(e.target.value)}>
          <option value="">{t('field.none')}</option>
          {users.data?.items
            .filter((u) => !u.disabled || u.id === assignee)
            .map((u) => (
              <option key={u.id} value={u.id}>
                {u.email}
              </option>
            ))}
        </select>
      </label>
      <ErrorMessage error={error} />
    </div>
  );
}
