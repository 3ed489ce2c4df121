import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import type { MessageKey } from '../i18n/en.ts';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import type { FieldDefinition, FormSet } from '../api/shapes.ts';

/**
 * The form-set builder (issue 44): a tenant admin adds, orders and changes a form set's fields. The service is
 * the authority on what a change may do (PUT /form-sets/{id} with expectedVersion): a field's key is fixed once
 * it exists, and its type, per-locale values and master only change where the values entries hold still fit
 * (the domain's form-set decider); the builder offers only those choices and shows the service's refusal when
 * another session changed the form set meanwhile. Blocks, roles and sitemap settings are kept as they are,
 * without the fields removed here.
 */
const FIELD_TYPES = ['text', 'textarea', 'tiptap', 'url', 'number', 'boolean', 'date', 'select', 'radio', 'multiselect', 'image', 'file', 'image_gallery', 'video_embed', 'entry_ref'] as const;
type FieldType = (typeof FIELD_TYPES)[number];
/** The types a kept field may take instead of its own (src/domain/content/form-set/form-set-decider.ts COMPATIBLE_TYPES). */
const COMPATIBLE: Partial<Record<FieldType, FieldType[]>> = { text: ['textarea'], textarea: ['text'], url: ['text', 'textarea'] };
const PER_LOCALE: readonly FieldType[] = ['text', 'textarea', 'tiptap'];
const FROM_MASTER: readonly FieldType[] = ['select', 'radio', 'multiselect'];

interface FieldRow {
  key: string;
  label: string;
  type: FieldType;
  required: boolean;
  locale_shared: boolean;
  masterEntityKey: string;
  description: string;
  /** The field as stored (null for a new one): its key and kind of value are fixed. */
  stored: FieldDefinition | null;
  /** The key was typed, not proposed from the label. */
  keyTyped: boolean;
  /** A stable id for React and the labels' ids. */
  rowId: string;
}

/** A field key proposed from a label: lowercase letters, digits and underscores, starting with a letter. */
export function proposeKey(label: string, separator: '_' | '-' = '_'): string {
  const words = label
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, separator)
    .replace(new RegExp(`^[${separator}0-9]+|[${separator}]+$`, 'g'), '');
  return words.slice(0, 64);
}

let rowCounter = 0;
const nextRowId = () => `field-row-${++rowCounter}`;

function rowOf(field: FieldDefinition): FieldRow {
  return {
    key: field.key,
    label: field.label,
    type: field.type as FieldType,
    required: field.required ?? false,
    locale_shared: field.locale_shared ?? false,
    masterEntityKey: field.masterEntityKey ?? '',
    description: field.description ?? '',
    stored: field,
    keyTyped: true,
    rowId: nextRowId(),
  };
}

export function FormSetBuilder() {
  const { t } = useI18n();
  const { formSetId } = useParams();
  const { api, projectId } = useProject();
  const existing = useQuery({ queryKey: [projectId, 'form-set', formSetId], queryFn: () => api.GET('/form-sets/{formSetId}', { params: { path: { formSetId: formSetId! } } }), enabled: Boolean(formSetId) });
  if (formSetId && !existing.data) return existing.error ? <ErrorMessage error={existing.error} /> : <p>{t('app.loading')}</p>;
  return <Builder key={formSetId ?? 'new'} formSet={existing.data ?? null} />;
}

function Builder({ formSet: loaded }: { formSet: FormSet | null }) {
  const { t } = useI18n();
  const { api, projectId, path, can } = useProject();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  // The form set as last read or saved here: what the next save is based on (expectedVersion).
  const [formSet, setFormSet] = useState(loaded);
  const masters = useQuery({ queryKey: [projectId, 'master-entities'], queryFn: () => api.GET('/master-entities') });
  const [name, setName] = useState(formSet?.name ?? '');
  const [slug, setSlug] = useState(formSet?.slug ?? '');
  const [slugTyped, setSlugTyped] = useState(Boolean(formSet));
  const [description, setDescription] = useState(formSet?.description ?? '');
  const [rows, setRows] = useState<FieldRow[]>(() => (formSet?.definition.fields ?? []).map(rowOf));
  const [saved, setSaved] = useState<number | null>(null);

  const update = (rowId: string, patch: Partial<FieldRow>) => setRows((current) => current.map((row) => (row.rowId === rowId ? { ...row, ...patch } : row)));
  const move = (index: number, by: -1 | 1) =>
    setRows((current) => {
      const next = [...current];
      const [row] = next.splice(index, 1);
      next.splice(index + by, 0, row!);
      return next;
    });
  const add = () => setRows((current) => [...current, { key: '', label: '', type: 'text', required: false, locale_shared: false, masterEntityKey: '', description: '', stored: null, keyTyped: false, rowId: nextRowId() }]);
  const removed = (formSet?.definition.fields ?? []).filter((field) => !rows.some((row) => row.stored?.key === field.key));

  const save = useMutation({
    mutationFn: async () => {
      const keys = new Set(rows.map((row) => row.key));
      const unmap = (roles: Record<string, string | undefined>) => Object.fromEntries(Object.entries(roles).filter(([, key]) => key !== undefined && keys.has(key)));
      const fields = rows.map((row) => ({
        key: row.key,
        label: row.label,
        type: row.type,
        required: row.required,
        locale_shared: PER_LOCALE.includes(row.type) ? row.locale_shared : false,
        ...(FROM_MASTER.includes(row.type) && row.masterEntityKey ? { masterEntityKey: row.masterEntityKey } : {}),
        ...(row.description.trim() ? { description: row.description.trim() } : {}),
        // Limits are kept as they were while the type stays.
        ...(row.stored?.limits && row.stored.type === row.type ? { limits: row.stored.limits } : {}),
      }));
      const definition = formSet?.definition;
      const body = {
        slug,
        name,
        description: description.trim() ? description.trim() : null,
        fields,
        blocks: (definition?.blocks ?? []).map((block) => ({ ...block, fieldKeys: block.fieldKeys.filter((key) => keys.has(key)) })),
        seoRoles: unmap(definition?.seoRoles ?? {}),
        widgetRoles: unmap(definition?.widgetRoles ?? {}),
        ...(definition?.sitemap ? { sitemap: definition.sitemap } : {}),
      };
      if (!formSet) return api.POST('/form-sets', { body });
      return api.PUT('/form-sets/{formSetId}', { params: { path: { formSetId: formSet.id } }, body: { ...body, expectedVersion: formSet.version } });
    },
    onSuccess: async (answer) => {
      setFormSet(answer);
      setRows(answer.definition.fields.map(rowOf));
      await queryClient.invalidateQueries({ queryKey: [projectId, 'form-sets'] });
      await queryClient.invalidateQueries({ queryKey: [projectId, 'form-set', answer.id] });
      setSaved(answer.version);
      if (!formSet) void navigate(path(`form-sets/${answer.id}`), { replace: true });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (removed.length > 0 && !window.confirm(t('formSets.confirmRemove', { fields: removed.map((field) => field.label).join(', ') }))) return;
    setSaved(null);
    save.mutate();
  };

  if (!can('schema.manage')) return <p>{t('formSets.adminsOnly')}</p>;
  return (
    <section className="form-set-builder">
      <div className="page-head">
        <h1>{formSet ? t('formSets.editTitle', { name: formSet.name }) : t('formSets.newTitle')}</h1>
        {formSet && <Link to={path(`content/${formSet.id}`)}>{t('formSets.entries')}</Link>}
      </div>
      <form onSubmit={submit}>
        <div className="filters">
          <label>
            {t('formSets.name')}
            <input
              required
              maxLength={200}
              value={name}
              onChange={(e) => {
                setName(e.target.value);
                if (!slugTyped) setSlug(proposeKey(e.target.value, '-'));
              }}
            />
          </label>
          <label>
            {t('formSets.slug')}
            <input
              required
              value={slug}
              onChange={(e) => {
                setSlug(e.target.value);
                setSlugTyped(true);
              }}
            />
          </label>
          <label className="grow">
            {t('formSets.description')}
            <input value={description} onChange={(e) => setDescription(e.target.value)} />
          </label>
        </div>
        <h2>{t('formSets.fields')}</h2>
        {rows.length === 0 && <p className="muted">{t('formSets.noFields')}</p>}
        <ol className="field-rows">
          {rows.map((row, index) => (
            <FieldRowEditor
              key={row.rowId}
              row={row}
              first={index === 0}
              last={index === rows.length - 1}
              masters={masters.data?.items ?? []}
              onChange={(patch) => update(row.rowId, patch)}
              onMove={(by) => move(index, by)}
              onRemove={() => setRows((current) => current.filter((r) => r.rowId !== row.rowId))}
            />
          ))}
        </ol>
        <div className="row">
          <button type="button" onClick={add}>
            {t('formSets.addField')}
          </button>
        </div>
        {removed.length > 0 && (
          <p className="notice" role="status">
            {t('formSets.removing', { fields: removed.map((field) => field.label).join(', ') })}
          </p>
        )}
        <ErrorMessage error={save.error} />
        {saved !== null && (
          <p role="status" className="muted">
            {t('formSets.saved', { version: saved })}
          </p>
        )}
        <div className="row sticky-actions">
          <button type="submit" className="primary" disabled={save.isPending}>
            {formSet ? t('formSets.save') : t('formSets.create')}
          </button>
        </div>
      </form>
    </section>
  );
}

function FieldRowEditor({
  row,
  first,
  last,
  masters,
  onChange,
  onMove,
  onRemove,
}: {
  row: FieldRow;
  first: boolean;
  last: boolean;
  masters: Array<{ key: string; name: string }>;
  onChange: (patch: Partial<FieldRow>) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}) {
  const { t } = useI18n();
  const stored = row.stored;
  const types: readonly FieldType[] = stored ? [stored.type as FieldType, ...(COMPATIBLE[stored.type as FieldType] ?? [])] : FIELD_TYPES;
  const name = row.label || row.key || t('formSets.newField');
  return (
    <li className="field-row" aria-label={name}>
      <div className="filters">
        <label>
          {t('formSets.label')}
          <input required value={row.label} onChange={(e) => onChange({ label: e.target.value, ...(row.keyTyped ? {} : { key: proposeKey(e.target.value) }) })} />
        </label>
        <label>
          {t('formSets.key')}
          <input
            required
            pattern="[a-z][a-z0-9_]*"
            maxLength={64}
            readOnly={stored !== null}
            title={stored ? t('formSets.keyFixed') : t('formSets.keyRule')}
            value={row.key}
            onChange={(e) => onChange({ key: e.target.value, keyTyped: true })}
          />
        </label>
        <label>
          {t('formSets.type')}
          <select value={row.type} onChange={(e) => onChange({ type: e.target.value as FieldType })}>
            {types.map((type) => (
              <option key={type} value={type}>
                {t(`fieldType.${type}` as MessageKey)}
              </option>
            ))}
          </select>
        </label>
        {FROM_MASTER.includes(row.type) && (
          <label>
            {t('formSets.master')}
            <select required value={row.masterEntityKey} disabled={Boolean(stored?.masterEntityKey)} onChange={(e) => onChange({ masterEntityKey: e.target.value })}>
              <option value="">{t('field.none')}</option>
              {masters.map((master) => (
                <option key={master.key} value={master.key}>
                  {master.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label className="check">
          <input type="checkbox" checked={row.required} onChange={(e) => onChange({ required: e.target.checked })} />
          {t('formSets.required')}
        </label>
        {PER_LOCALE.includes(row.type) && (
          <label className="check">
            <input type="checkbox" checked={row.locale_shared} disabled={stored !== null} onChange={(e) => onChange({ locale_shared: e.target.checked })} />
            {t('formSets.localeShared')}
          </label>
        )}
      </div>
      <div className="filters">
        <label className="grow">
          {t('formSets.help')}
          <input value={row.description} maxLength={1000} onChange={(e) => onChange({ description: e.target.value })} />
        </label>
        <div className="row">
          <button type="button" disabled={first} aria-label={`${t('formSets.up')}: ${name}`} onClick={() => onMove(-1)}>
            {t('formSets.up')}
          </button>
          <button type="button" disabled={last} aria-label={`${t('formSets.down')}: ${name}`} onClick={() => onMove(1)}>
            {t('formSets.down')}
          </button>
          <button type="button" className="danger" aria-label={`${t('formSets.remove')}: ${name}`} onClick={onRemove}>
            {t('formSets.remove')}
          </button>
        </div>
      </div>
    </li>
  );
}

/** The project's form sets, for the builder. */
export function FormSetList() {
  const { t } = useI18n();
  const { api, projectId, path, can } = useProject();
  const formSets = useQuery({ queryKey: [projectId, 'form-sets'], queryFn: () => api.GET('/form-sets') });
  return (
    <section>
      <div className="page-head">
        <h1>{t('formSets.title')}</h1>
        {can('schema.manage') && (
          <Link className="button primary" to={path('form-sets/new')}>
            {t('formSets.new')}
          </Link>
        )}
      </div>
      <ErrorMessage error={formSets.error} />
      <table className="list">
        <thead>
          <tr>
            <th scope="col">{t('formSets.name')}</th>
            <th scope="col">{t('formSets.slug')}</th>
            <th scope="col">{t('formSets.version')}</th>
          </tr>
        </thead>
        <tbody>
          {formSets.data?.items.map((formSet) => (
            <tr key={formSet.id}>
              <td>
                <Link to={path(`form-sets/${formSet.id}`)}>{formSet.name}</Link>
              </td>
              <td>{formSet.slug}</td>
              <td>{formSet.version}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
