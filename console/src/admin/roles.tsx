import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { ActionsColumnHeader } from '../components/actions-column-header.tsx';
import { CONTENT_CAPABILITIES, type Capability } from '../session/grants.ts';
import { useCapabilityLabel, useRoles, type CustomRole } from './role-choice.tsx';
import { RoleEditor } from './role-editor.tsx';

/** The spec's two roles, the administrator first. */
const BUILT_IN_ROLES = ['tenant_admin', 'tenant_user'] as const;

/**
 * The organisation's roles (issue 47): the two built-in ones and its own, each with what it may do beyond
 * reading (the capabilities, in words), the form sets of this project its content actions are limited to, and
 * how many enabled members hold it. Every member reads the page; a tenant_admin defines, changes and removes
 * roles here (a role someone holds is not removed: the service answers 409, shown as it says it).
 */
export function RolesPage() {
  const { t } = useI18n();
  const { api, projectId, manageRoles } = useProject();
  const queryClient = useQueryClient();
  const roles = useRoles();
  const users = useQuery({ queryKey: ['users'], queryFn: () => api.GET('/users') });
  const formSets = useQuery({ queryKey: [projectId, 'form-sets'], queryFn: () => api.GET('/form-sets') });
  const label = useCapabilityLabel(roles.data);
  const [editing, setEditing] = useState<CustomRole | 'new' | null>(null);
  const [removing, setRemoving] = useState<CustomRole | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const remove = useMutation({
    mutationFn: (role: CustomRole) => api.DELETE('/roles/{roleId}', { params: { path: { roleId: role.id } } }),
    onSuccess: async (_answer, role) => {
      setRemoving(null);
      setOutcome(t('roles.removed', { name: role.name }));
      await queryClient.invalidateQueries({ queryKey: ['roles'] });
    },
  });
  const formSetName = new Map((formSets.data?.items ?? []).map((formSet) => [formSet.id, formSet.name]));
  const builtInMembers = (role: string) => users.data?.items.filter((u) => u.role === role && !u.roleId && !u.disabled).length;

  const mayList = (capabilities: readonly Capability[]) =>
    capabilities.length === 0 ? (
      <span className="muted">{t('roles.readingOnly')}</span>
    ) : (
      <ul className="capabilities">
        {capabilities.map((capability) => (
          <li key={capability}>{label(capability)}</li>
        ))}
      </ul>
    );
  const contentIn = (capabilities: readonly Capability[], formSetIds: readonly string[] | null) => {
    if (!capabilities.some((capability) => CONTENT_CAPABILITIES.includes(capability))) return <span className="muted">{t('roles.noContent')}</span>;
    if (formSetIds === null) return t('roles.everyFormSet');
    const here = formSetIds.filter((id) => formSetName.has(id));
    const elsewhere = formSetIds.length - here.length;
    return (
      <ul className="capabilities">
        {here.map((id) => (
          <li key={id}>{formSetName.get(id)}</li>
        ))}
        {elsewhere > 0 && <li className="muted">{t('roles.otherProjects', { count: elsewhere })}</li>}
      </ul>
    );
  };

  return (
    <section>
      <div className="page-head">
        <h1>{t('roles.title')}</h1>
        {manageRoles && (
          <button type="button" className="primary" onClick={() => setEditing('new')} disabled={!roles.data}>
            {t('roles.new')}
          </button>
        )}
      </div>
      <p className="help">{t('roles.intro')}</p>
      {!manageRoles && <p className="notice">{t('roles.readOnly')}</p>}
      <ErrorMessage error={roles.error ?? users.error ?? formSets.error} />
      {outcome && (
        <p className="notice" role="status">
          {outcome}
        </p>
      )}
      {roles.data && (
        <table className="list roles">
          <caption className="visually-hidden">{t('roles.list')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('roles.col.name')}</th>
              <th scope="col">{t('roles.col.may')}</th>
              <th scope="col">{t('roles.col.formSets')}</th>
              <th scope="col">{t('roles.col.members')}</th>
              {manageRoles && <ActionsColumnHeader />}
            </tr>
          </thead>
          <tbody>
            {BUILT_IN_ROLES.map((role) => {
              const builtIn = roles.data.builtInRoles.find((b) => b.role === role);
              return (
                <tr key={role}>
                  <th scope="row">
                    <strong>{t(`role.${role}`)}</strong> <span className="badge">{t('roles.builtIn')}</span>
                    <div className="muted small">{t(`roles.builtIn.${role}`)}</div>
                  </th>
                  <td>{role === 'tenant_admin' ? t('roles.everything') : mayList(builtIn?.capabilities ?? [])}</td>
                  <td>{contentIn(builtIn?.capabilities ?? [], null)}</td>
                  <td>{builtInMembers(role) ?? ''}</td>
                  {manageRoles && <td />}
                </tr>
              );
            })}
            {roles.data.items.map((role) => (
              <tr key={role.id}>
                <th scope="row">
                  <strong>{role.name}</strong>
                  {role.description && <div className="muted small">{role.description}</div>}
                </th>
                <td>{mayList(role.capabilities)}</td>
                <td>{contentIn(role.capabilities, role.formSetIds)}</td>
                <td>{role.members}</td>
                {manageRoles && (
                  <td className="nowrap">
                    <button type="button" aria-label={t('roles.editNamed', { name: role.name })} onClick={() => setEditing(role)}>
                      {t('roles.edit')}
                    </button>{' '}
                    <button type="button" className="danger" aria-label={t('roles.removeNamed', { name: role.name })} onClick={() => setRemoving(role)}>
                      {t('roles.remove')}
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {editing && roles.data && (
        <RoleEditor
          role={editing === 'new' ? null : editing}
          roles={roles.data}
          formSets={formSets.data?.items ?? []}
          onClose={() => setEditing(null)}
          onSaved={(name) => {
            setEditing(null);
            setOutcome(t('roles.saved', { name }));
          }}
        />
      )}
      {removing && (
        <FormDialog open title={t('roles.removeTitle', { name: removing.name })} submitLabel={t('roles.remove')} danger mutation={remove} onClose={() => setRemoving(null)} onSubmit={() => remove.mutate(removing)}>
          <p>{t('roles.removeText')}</p>
        </FormDialog>
      )}
    </section>
  );
}
