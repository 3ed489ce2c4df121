import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { Modal } from '../components/modal.tsx';
import { ErrorMessage, sentence } from '../components/error-message.tsx';
import { CONTENT_CAPABILITIES, type Capability } from '../session/grants.ts';
import { useCapabilityLabel, type CustomRole, type RoleList } from './role-choice.tsx';

/** The parts of a role's definition the service names when it refuses one (VALIDATION_ERROR), each shown at its field. */
const PARTS = ['name', 'description', 'capabilities', 'formSetIds'] as const;
type Part = (typeof PARTS)[number];

/** The part of the definition a refusal is about (its message starts with the part's name), or null. */
function partOf(error: unknown): Part | null {
  if (!(error instanceof ApiError) || error.code !== 'VALIDATION_ERROR') return null;
  return PARTS.find((part) => new RegExp(`^${part}\\b`).test(error.message)) ?? null;
}

/**
 * A custom role to define or change (a tenant_admin's): its name and description, the capabilities it holds
 * (the service's list, with its words), and the form sets of this project its content capabilities are limited
 * to, which apply only once a content capability is ticked. The service's refusals of a field are shown at the
 * field; a conflict (the name is taken) as the service says it. A limit to form sets of other projects is kept.
 */
export function RoleEditor({ role, roles, formSets, onClose, onSaved }: { role: CustomRole | null; roles: RoleList; formSets: Array<{ id: string; name: string }>; onClose: () => void; onSaved: (name: string) => void }) {
  const { t } = useI18n();
  const { api } = useProject();
  const queryClient = useQueryClient();
  const label = useCapabilityLabel(roles);
  const [name, setName] = useState(role?.name ?? '');
  const [description, setDescription] = useState(role?.description ?? '');
  const [capabilities, setCapabilities] = useState<Capability[]>(role?.capabilities ?? []);
  const [limited, setLimited] = useState(Boolean(role?.formSetIds));
  const [formSetIds, setFormSetIds] = useState<string[]>(role?.formSetIds ?? []);
  const here = new Set(formSets.map((formSet) => formSet.id));
  const elsewhere = formSetIds.filter((id) => !here.has(id)).length;
  const content = capabilities.some((capability) => CONTENT_CAPABILITIES.includes(capability));
  const save = useMutation({
    mutationFn: async () => {
      const body = { name: name.trim(), description: description.trim() || null, capabilities, formSetIds: content && limited ? formSetIds : null };
      return role ? api.PUT('/roles/{roleId}', { params: { path: { roleId: role.id } }, body }) : api.POST('/roles', { body });
    },
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: ['roles'] });
      onSaved(saved.name);
    },
  });
  const part = partOf(save.error);
  const problem = (at: Part) => (part === at && save.error instanceof ApiError ? { id: `role-${at}-error`, text: sentence(save.error.message, save.error.hint) } : null);
  const invalid = (at: Part) => (problem(at) ? { 'aria-invalid': true, 'aria-describedby': `role-${at}-error` } : {});
  const problemAt = (at: Part) => {
    const shown = problem(at);
    return shown ? (
      <p id={shown.id} className="field-error" role="alert">
        {shown.text}
      </p>
    ) : null;
  };
  const toggle = <T,>(list: T[], item: T, on: boolean) => (on ? [...list, item] : list.filter((x) => x !== item));
  /** A change to the part the service refused: its refusal goes (the next save is judged anew). */
  const edited = (...at: Part[]) => {
    if (part && at.includes(part)) save.reset();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <Modal open wide title={role ? t('roles.editTitle', { name: role.name }) : t('roles.newTitle')} onClose={onClose}>
      <form onSubmit={submit} className="admin-form role-editor">
        <label>
          {t('roles.name')}
          <input
            type="text"
            required
            maxLength={80}
            value={name}
            onChange={(e) => {
              edited('name');
              setName(e.target.value);
            }}
            {...invalid('name')}
          />
        </label>
        {problemAt('name')}
        <label>
          {t('roles.description')}
          <textarea
            rows={2}
            maxLength={500}
            value={description}
            onChange={(e) => {
              edited('description');
              setDescription(e.target.value);
            }}
            {...invalid('description')}
          />
        </label>
        {problemAt('description')}
        <fieldset aria-describedby="role-may-help">
          <legend>{t('roles.may')}</legend>
          <p id="role-may-help" className="help">
            {t('roles.mayHelp')}
          </p>
          <ul className="checks two-columns">
            {roles.capabilities.map(({ capability }) => (
              <li key={capability}>
                <label className="capability">
                  <input
                    type="checkbox"
                    checked={capabilities.includes(capability)}
                    onChange={(e) => {
                      edited('capabilities', 'formSetIds');
                      setCapabilities(toggle(capabilities, capability, e.target.checked));
                    }}
                  />
                  <span>
                    {label(capability)} <code className="muted small">{capability}</code>
                  </span>
                </label>
              </li>
            ))}
          </ul>
          {problemAt('capabilities')}
        </fieldset>
        <fieldset disabled={!content} aria-describedby="role-limit-help">
          <legend>{t('roles.limit')}</legend>
          <p id="role-limit-help" className="help">
            {t('roles.limitHelp')}
          </p>
          <label className="inline">
            <input
              type="radio"
              name="role-limit"
              checked={!limited}
              onChange={() => {
                edited('formSetIds');
                setLimited(false);
              }}
            />
            {t('roles.limit.every')}
          </label>
          <label className="inline">
            <input
              type="radio"
              name="role-limit"
              checked={limited}
              onChange={() => {
                edited('formSetIds');
                setLimited(true);
              }}
            />
            {t('roles.limit.some')}
          </label>
          <ul className="checks">
            {formSets.map((formSet) => (
              <li key={formSet.id}>
                <label className="inline">
                  <input
                    type="checkbox"
                    disabled={!limited}
                    checked={formSetIds.includes(formSet.id)}
                    onChange={(e) => {
                      edited('formSetIds');
                      setFormSetIds(toggle(formSetIds, formSet.id, e.target.checked));
                    }}
                    {...invalid('formSetIds')}
                  />
                  {formSet.name}
                </label>
              </li>
            ))}
          </ul>
          {limited && elsewhere > 0 && <p className="help">{t('roles.otherProjects', { count: elsewhere })}</p>}
          {problemAt('formSetIds')}
        </fieldset>
        {!part && <ErrorMessage error={save.error} />}
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            {t('action.cancel')}
          </button>
          <button type="submit" className="primary" disabled={save.isPending}>
            {role ? t('roles.save') : t('roles.create')}
          </button>
        </div>
      </form>
    </Modal>
  );
}
