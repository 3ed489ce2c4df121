import { Link } from 'react-router';
import type { AdminSchema } from '@annals/client';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { ActionsColumnHeader } from '../components/actions-column-header.tsx';
import { useRoles } from './role-choice.tsx';

/** roleGroups of the OpenID Connect and SAML settings: a group of the provider and the custom role it gives. */
export type RoleGroup = AdminSchema<'OidcSettings'>['roleGroups'][number];

/** A row of the editor: a role group as typed, with a key of its own (rows are added and removed). */
export interface RoleGroupRow extends RoleGroup {
  key: number;
}

/** The service takes at most this many (MAX_ROLE_GROUPS on the service). */
const MAX_ROLE_GROUPS = 50;

let lastKey = 0;
const row = (group: RoleGroup): RoleGroupRow => ({ ...group, key: ++lastKey });

/** The settings' role groups as rows of the editor. */
export const roleGroupRows = (roleGroups: readonly RoleGroup[]): RoleGroupRow[] => roleGroups.map(row);

/** The rows as the settings take them: the group trimmed; a row left entirely empty is dropped. */
export const roleGroupsOf = (rows: readonly RoleGroupRow[]): RoleGroup[] =>
  rows.map(({ group, roleId }) => ({ group: group.trim(), roleId })).filter(({ group, roleId }) => group !== '' || roleId !== '');

/**
 * "Roles from groups" (docs/sign-in.md, "Roles and single sign-on"): rows of a group of the provider and one of
 * the organisation's own roles (GET /roles). At each sign-in an administrator group comes first, then the first
 * of these rows whose group the person is in (tenant_user with its role), then the editor groups; once any row
 * is saved, the provider decides custom roles. A role the organisation lacks is refused by the service (400),
 * shown under the form as it says it.
 */
export function RoleGroupsEditor({ rows, onChange }: { rows: RoleGroupRow[]; onChange: (rows: RoleGroupRow[]) => void }) {
  const { t } = useI18n();
  const { path } = useProject();
  const roles = useRoles();
  const custom = roles.data?.items ?? [];
  const change = (key: number, part: Partial<RoleGroup>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...part } : r)));
  return (
    <fieldset className="sso-role-groups">
      <legend>{t('sso.roleGroups')}</legend>
      <p className="help">{t('sso.roleGroupsOrder')}</p>
      <p className="help">{t('sso.roleGroupsProvider')}</p>
      <ErrorMessage error={roles.error} />
      {roles.isSuccess && custom.length === 0 && (
        <p className="help">
          {t('sso.roleGroupsNoRoles')} <Link to={path('roles')}>{t('sso.roleGroupsDefine')}</Link>
        </p>
      )}
      {rows.length > 0 ? (
        <table className="list">
          <thead>
            <tr>
              <th scope="col">{t('sso.roleGroupsGroup')}</th>
              <th scope="col">{t('sso.roleGroupsRole')}</th>
              <ActionsColumnHeader />
            </tr>
          </thead>
          <tbody>
            {rows.map((r, index) => (
              <tr key={r.key}>
                <td>
                  <input type="text" value={r.group} required maxLength={500} autoComplete="off" aria-label={t('sso.roleGroupsGroupOf', { n: index + 1 })} onChange={(e) => change(r.key, { group: e.target.value })} />
                </td>
                <td>
                  <select value={r.roleId} required aria-label={t('sso.roleGroupsRoleOf', { n: index + 1 })} onChange={(e) => change(r.key, { roleId: e.target.value })}>
                    <option value="">{t('sso.roleGroupsChoose')}</option>
                    {/* A role not listed keeps its place: the list is loading, or the role was removed meanwhile (the save is then refused). */}
                    {r.roleId && !custom.some((role) => role.id === r.roleId) && <option value={r.roleId}>{roles.isSuccess ? t('sso.roleGroupsGone', { id: r.roleId }) : r.roleId}</option>}
                    {custom.map((role) => (
                      <option key={role.id} value={role.id}>
                        {role.name}
                      </option>
                    ))}
                  </select>
                </td>
                <td>
                  <button type="button" aria-label={t('sso.roleGroupsRemoveOf', { n: index + 1 })} onClick={() => onChange(rows.filter((other) => other.key !== r.key))}>
                    {t('sso.roleGroupsRemove')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted small">{t('sso.roleGroupsNone')}</p>
      )}
      <div>
        <button type="button" disabled={custom.length === 0 || rows.length >= MAX_ROLE_GROUPS} onClick={() => onChange([...rows, row({ group: '', roleId: '' })])}>
          {t('sso.roleGroupsAdd')}
        </button>
      </div>
    </fieldset>
  );
}
