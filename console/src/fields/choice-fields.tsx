import { useQuery } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import type { FieldDefinition } from '../api/shapes.ts';

/** The records of the master behind a select, radio or multiselect field, labelled in the UI language. */
export function useMasterOptions(masterKey: string | undefined) {
  const { api, projectId } = useProject();
  const { language } = useI18n();
  const masters = useQuery({ queryKey: [projectId, 'masters'], queryFn: () => api.GET('/master-entities'), staleTime: 60_000 });
  const masterId = masters.data?.items.find((m) => m.key === masterKey)?.id;
  const records = useQuery({
    queryKey: [projectId, 'master-records', masterId, language],
    queryFn: () => api.GET('/master-entities/{masterId}/records', { params: { path: { masterId: masterId! }, query: { locale: language } } }),
    enabled: Boolean(masterId),
    staleTime: 60_000,
  });
  return records.data?.items ?? [];
}

export function ChoiceField({ id, field, value, onChange, describedBy }: { id: string; field: FieldDefinition; value: unknown; onChange: (next: unknown) => void; describedBy?: string }) {
  const { t } = useI18n();
  const options = useMasterOptions(field.masterEntityKey);
  if (field.type === 'select') {
    return (
      <select id={id} value={typeof value === 'string' ? value : ''} aria-describedby={describedBy} onChange={(e) => onChange(e.target.value || undefined)}>
        <option value="">{t('field.none')}</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    );
  }
  if (field.type === 'radio') {
    return (
      <div className="choices" role="radiogroup" aria-labelledby={`${id}-label`} aria-describedby={describedBy}>
        {options.map((o) => (
          <label key={o.value} className="inline">
            <input type="radio" name={id} value={o.value} checked={value === o.value} onChange={() => onChange(o.value)} />
            {o.label}
          </label>
        ))}
      </div>
    );
  }
  const selected = Array.isArray(value) ? (value as string[]) : [];
  return (
    <div className="choices" role="group" aria-labelledby={`${id}-label`} aria-describedby={describedBy}>
      {options.map((o) => (
        <label key={o.value} className="inline">
          <input
            type="checkbox"
            checked={selected.includes(o.value)}
            onChange={(e) => {
              const next = e.target.checked ? [...selected, o.value] : selected.filter((v) => v !== o.value);
              onChange(next.length ? next : undefined);
            }}
          />
          {o.label}
        </label>
      ))}
    </div>
  );
}
