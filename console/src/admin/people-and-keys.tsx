import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { planName } from './plan-notice.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { Modal } from '../components/modal.tsx';
import { ShownOnce } from './copy-button.tsx';
import { Pager, usePaged } from './pager.tsx';
import { KEY_SCOPES, planAtLeast, type ApiKey, type ConsoleUser, type IssuedKey, type KeyScope } from './shapes.ts';
import { roleBody, roleChoiceOf, RoleOptions, useRoleGiving, useRoleName, useRoles, type RoleChoice } from './role-choice.tsx';
import { ActionsColumnHeader } from '../components/actions-column-header.tsx';
import { SingleSignOn } from './single-sign-on.tsx';
import { SecondFactorPolicy } from './second-factor-policy.tsx';
import { ResetSecondFactor, SecondFactorSummary } from './member-second-factor.tsx';

/**
 * The tenant's console users with their roles (people.manage gives them), how they sign in (a second factor,
 * single sign-on: a tenant_admin's), and the project's agent and public keys.
 */
export function PeopleAndKeys() {
  const { t } = useI18n();
  const { manageRoles } = useProject();
  return (
    <section>
      <h1>{t('people.title')}</h1>
      <Users />
      {manageRoles && <SecondFactorPolicy />}
      {manageRoles && <SingleSignOn />}
      <Keys />
    </section>
  );
}

function Users() {
  const { t, formatTime } = useI18n();
  const { api, can, userId, path } = useProject();
  const manages = can('people.manage');
  const queryClient = useQueryClient();
  const [disabling, setDisabling] = useState<ConsoleUser | null>(null);
  const roles = useRoles();
  const roleName = useRoleName(roles.data);
  const giving = useRoleGiving(roles.data);
  // A role's member count changes with the members' roles.
  const refresh = () => Promise.all([queryClient.invalidateQueries({ queryKey: ['users'] }), queryClient.invalidateQueries({ queryKey: ['roles'] })]);
  const patch = ({ user, body }: { user: ConsoleUser; body: ReturnType<typeof roleBody> | { disabled: true } }) => api.PATCH('/users/{userId}', { params: { path: { userId: user.id } }, body });
  const change = useMutation({ mutationFn: patch, onSuccess: refresh });
  // Disabling answers inside its dialog, so it is a mutation of its own, apart from the role changes.
  const disable = useMutation({
    mutationFn: (user: ConsoleUser) => patch({ user, body: { disabled: true } }),
    onSuccess: async () => {
      setDisabling(null);
      await refresh();
    },
  });
  const users = useQuery({ queryKey: ['users'], queryFn: () => api.GET('/users') });
  const page = usePaged(users.data?.items ?? [], 20);
  const [draft, setDraft] = useState({ email: '', password: '', role: 'tenant_user' as RoleChoice, byEmail: true });
  const [outcome, setOutcome] = useState<string | null>(null);
  // The role to invite with: the one chosen, or the first the user may give (someone with people.manage alone may not give tenant_user).
  const inviteRole = giving.choices.includes(draft.role) ? draft.role : (giving.choices[0] ?? draft.role);
  /** What an invitation's answer says happened to its e-mail. */
  const mailOutcome = (invited: { email: string; mailed: boolean; mailError?: string }) =>
    invited.mailed ? t('people.sent', { email: invited.email }) : t('people.notSent', { email: invited.email, reason: invited.mailError ?? '' });
  const create = useMutation({
    mutationFn: async () => {
      if (!draft.byEmail) {
        await api.POST('/users', { body: { email: draft.email, password: draft.password, ...roleBody(inviteRole) } });
        return null;
      }
      return mailOutcome(await api.POST('/users/invitations', { body: { email: draft.email, ...roleBody(inviteRole) } }));
    },
    onSuccess: async (said) => {
      setOutcome(said);
      setDraft({ email: '', password: '', role: 'tenant_user', byEmail: draft.byEmail });
      await refresh();
    },
  });
  const sendAgain = useMutation({
    mutationFn: async (user: ConsoleUser) => mailOutcome(await api.POST('/users/{userId}/invitation', { params: { path: { userId: user.id } } })),
    onSuccess: async (said) => {
      setOutcome(said);
      await refresh();
    },
  });
  const now = Date.now();
  const stateOf = (u: ConsoleUser) =>
    u.disabled ? t('people.disabled') : u.invitationExpiresAt ? (Date.parse(u.invitationExpiresAt) > now ? t('people.invited', { time: formatTime(u.invitationExpiresAt) }) : t('people.invitationExpired')) : t('people.active');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <section aria-labelledby="users-title">
      <h2 id="users-title">{t('people.users')}</h2>
      <ErrorMessage error={users.error} />
      <table className="list">
        <thead>
          <tr>
            <th scope="col">{t('people.email')}</th>
            <th scope="col">{t('people.role')}</th>
            <th scope="col">{t('people.state')}</th>
            <th scope="col">{t('people.secondFactor')}</th>
            <th scope="col">{t('people.created')}</th>
            {manages && <ActionsColumnHeader />}
          </tr>
        </thead>
        <tbody>
          {page.items.map((u) => (
            <tr key={u.id}>
              <td>{u.email}</td>
              <td>
                {giving.mayChange(u) && u.id !== userId && !u.disabled ? (
                  <select aria-label={t('people.roleOf', { email: u.email })} value={roleChoiceOf(u)} disabled={change.isPending} onChange={(e) => change.mutate({ user: u, body: roleBody(e.target.value as RoleChoice) })}>
                    <RoleOptions roles={roles.data} choices={giving.choices} current={roleChoiceOf(u)} />
                  </select>
                ) : (
                  roleName(u)
                )}
              </td>
              <td className="words">{stateOf(u)}</td>
              <td className="nowrap">
                <SecondFactorSummary user={u} />
              </td>
              <td>{formatTime(u.createdAt)}</td>
              {manages && (
                <td>
                  {u.invitationExpiresAt && !u.disabled && (
                    <button type="button" aria-label={t('people.sendAgainNamed', { email: u.email })} disabled={sendAgain.isPending} onClick={() => sendAgain.mutate(u)}>
                      {t('people.sendAgain')}
                    </button>
                  )}{' '}
                  {giving.mayChange(u) && <ResetSecondFactor user={u} />}{' '}
                  {giving.mayChange(u) && u.id !== userId && !u.disabled && (
                    <button type="button" className="danger" aria-label={t('people.disableNamed', { email: u.email })} onClick={() => setDisabling(u)}>
                      {t('people.disable')}
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <Pager {...page} />
      <p className="help">
        {t('people.roles')} <Link to={path('roles')}>{t('people.rolesLink')}</Link>
      </p>
      <ErrorMessage error={change.error} />
      <ErrorMessage error={sendAgain.error} />
      {disabling && (
        <FormDialog open title={t('people.disableTitle', { email: disabling.email })} submitLabel={t('people.disable')} danger mutation={disable} onClose={() => setDisabling(null)} onSubmit={() => disable.mutate(disabling)}>
          <p>{t('people.disableText')}</p>
        </FormDialog>
      )}
      {manages && (
        <form className="filters" onSubmit={submit} aria-labelledby="invite-title">
          <h3 id="invite-title" className="visually-hidden">
            {t('people.invite')}
          </h3>
          <label>
            {t('people.email')}
            <input type="email" required value={draft.email} onChange={(e) => setDraft({ ...draft, email: e.target.value })} />
          </label>
          {/* Labelled by id: the options' words stay out of the label's name. */}
          <div className="stacked-field">
            <label htmlFor="new-user-how">{t('people.how')}</label>
            <select id="new-user-how" value={draft.byEmail ? 'email' : 'password'} onChange={(e) => setDraft({ ...draft, byEmail: e.target.value === 'email' })}>
              <option value="email">{t('people.byEmail')}</option>
              <option value="password">{t('people.withPassword')}</option>
            </select>
          </div>
          {!draft.byEmail && (
            <label>
              {t('people.password')}
              <input type="password" required autoComplete="new-password" value={draft.password} onChange={(e) => setDraft({ ...draft, password: e.target.value })} />
            </label>
          )}
          <label>
            {t('people.role')}
            <select value={inviteRole} onChange={(e) => setDraft({ ...draft, role: e.target.value as RoleChoice })}>
              <RoleOptions roles={roles.data} choices={giving.choices} />
            </select>
          </label>
          <button type="submit" className="primary" disabled={create.isPending}>
            {t('people.invite')}
          </button>
        </form>
      )}
      <ErrorMessage error={create.error} />
      {outcome && (
        <p className="notice" role="status">
          {outcome}
        </p>
      )}
    </section>
  );
}

function Keys() {
  const { t, formatTime } = useI18n();
  const { api, projectId, project, can } = useProject();
  const manages = can('people.manage');
  const queryClient = useQueryClient();
  const keys = useQuery({ queryKey: [projectId, 'keys'], queryFn: () => api.GET('/keys'), enabled: manages });
  const page = usePaged(keys.data?.items ?? [], 20);
  const [draft, setDraft] = useState({ name: '', scope: 'full' as KeyScope });
  const [issued, setIssued] = useState<IssuedKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: [projectId, 'keys'] });
  const issue = useMutation({
    mutationFn: (type: 'agent' | 'public') => api.POST('/keys', { body: type === 'agent' ? { type, scope: draft.scope, name: draft.name.trim() || undefined } : { type } }),
    onSuccess: async (key) => {
      setIssued(key);
      setDraft({ name: '', scope: 'full' });
      await refresh();
    },
  });
  const revoke = useMutation({
    mutationFn: (key: ApiKey) => api.DELETE('/keys/{keyId}', { params: { path: { keyId: key.id } } }),
    onSuccess: async () => {
      setRevoking(null);
      await refresh();
    },
  });
  if (!manages) return null;
  const oneAgentKey = !planAtLeast(project.plan, 'standard');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    issue.mutate('agent');
  };
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">{t('keys.title')}</h2>
      <p className="help">{oneAgentKey ? t('keys.planOne', { plan: planName(project.plan) }) : t('keys.planMany')}</p>
      <ErrorMessage error={keys.error} />
      <table className="list">
        <thead>
          <tr>
            <th scope="col">{t('keys.type')}</th>
            <th scope="col">{t('keys.name')}</th>
            <th scope="col">{t('keys.prefix')}</th>
            <th scope="col">{t('keys.scope')}</th>
            <th scope="col">{t('keys.created')}</th>
            <th scope="col">{t('keys.lastUsed')}</th>
            <th scope="col">{t('keys.state')}</th>
            <ActionsColumnHeader />
          </tr>
        </thead>
        <tbody>
          {page.items.map((k) => (
            <tr key={k.id}>
              <td className="nowrap">{t(`keys.type.${k.type}`)}</td>
              <td className="words">{k.name ?? ''}</td>
              <td className="nowrap">
                <code>{k.prefix}…</code>
              </td>
              <td className="nowrap">{k.scope ?? ''}</td>
              <td>{formatTime(k.createdAt)}</td>
              <td>{k.type === 'agent' ? (k.lastUsedAt ? formatTime(k.lastUsedAt) : t('keys.neverUsed')) : ''}</td>
              <td>{k.revokedAt ? t('keys.revokedAt', { time: formatTime(k.revokedAt) }) : t('keys.active')}</td>
              <td className="nowrap">
                {!k.revokedAt && (
                  <button type="button" className="danger" aria-label={t('keys.revokeNamed', { prefix: k.prefix })} onClick={() => setRevoking(k)}>
                    {t('keys.revoke')}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager {...page} />
      <form className="filters" onSubmit={submit}>
        <label>
          {t('keys.name')}
          <input type="text" maxLength={100} value={draft.name} onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
        </label>
        <label>
          {t('keys.scope')}
          <select value={draft.scope} onChange={(e) => setDraft({ ...draft, scope: e.target.value as KeyScope })}>
            {KEY_SCOPES.map((scope) => (
              <option key={scope} value={scope}>
                {t(`keys.scope.${scope}`)}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary" disabled={issue.isPending}>
          {t('keys.newAgent')}
        </button>
        <button type="button" onClick={() => issue.mutate('public')} disabled={issue.isPending}>
          {t('keys.newPublic')}
        </button>
      </form>
      <ErrorMessage error={issue.error} />
      <Modal open={issued !== null} title={t('keys.issuedTitle')} onClose={() => setIssued(null)}>
        {issued && (
          <ShownOnce
            warning={t('keys.shownOnce')}
            label={issued.type === 'agent' ? t('keys.issuedAgent', { scope: issued.scope ?? '' }) : t('keys.issuedPublic')}
            value={issued.key}
            onStored={() => setIssued(null)}
          />
        )}
      </Modal>
      {revoking && (
        <FormDialog open title={t('keys.revokeTitle', { prefix: revoking.prefix })} submitLabel={t('keys.revoke')} danger mutation={revoke} onClose={() => setRevoking(null)} onSubmit={() => revoke.mutate(revoking)}>
          <p>{t('keys.revokeText')}</p>
        </FormDialog>
      )}
    </section>
  );
}
