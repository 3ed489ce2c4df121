import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { Modal } from '../components/modal.tsx';
import { useDebouncedValue } from '../components/use-debounced-value.ts';
import type { EntrySummary } from '../api/shapes.ts';

/** entry_ref: the id of another entry, chosen by searching a form set's entries. */
export function EntryRefField({ value, onChange }: { value: unknown; onChange: (next: unknown) => void }) {
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const entryId = typeof value === 'string' ? value : undefined;
  const current = useQuery({ queryKey: [projectId, 'entry', entryId], queryFn: () => api.GET('/entries/{entryId}', { params: { path: { entryId: entryId! } } }), enabled: Boolean(entryId), retry: false });
  const [open, setOpen] = useState(false);
  return (
    <div className="entry-ref">
      <span>{entryId ? (current.data ? `${current.data.title} (/${current.data.slug})` : entryId) : t('field.none')}</span>
      <div className="row">
        <button type="button" onClick={() => setOpen(true)}>
          {t('field.chooseEntry')}
        </button>
        {entryId && (
          <button type="button" onClick={() => onChange(undefined)}>
            {t('field.remove')}
          </button>
        )}
      </div>
      <EntryPicker
        open={open}
        onClose={() => setOpen(false)}
        onPick={(entry) => {
          onChange(entry.id);
          setOpen(false);
        }}
      />
    </div>
  );
}

export function EntryPicker({ open, onClose, onPick }: { open: boolean; onClose: () => void; onPick: (entry: EntrySummary) => void }) {
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const formSets = useQuery({ queryKey: [projectId, 'form-sets'], queryFn: () => api.GET('/form-sets'), enabled: open });
  const [formSetId, setFormSetId] = useState('');
  const [q, setQ] = useState('');
  // Sent once the typing pauses, trimmed: "news " asks nothing new after "news".
  const search = useDebouncedValue(q.trim());
  const chosen = formSetId || formSets.data?.items[0]?.id || '';
  const entries = useQuery({
    queryKey: [projectId, 'entry-picker', chosen, search],
    queryFn: () => api.GET('/form-sets/{formSetId}/entries', { params: { path: { formSetId: chosen }, query: { limit: 20, q: search || undefined } } }),
    enabled: open && Boolean(chosen),
  });
  return (
    <Modal open={open} title={t('field.chooseEntry')} onClose={onClose} wide>
      <div className="filters">
        <label>
          {t('nav.formSets')}
          <select value={chosen} onChange={(e) => setFormSetId(e.target.value)}>
            {formSets.data?.items.map((fs) => (
              <option key={fs.id} value={fs.id}>
                {fs.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('list.search')}
          <input type="search" value={q} onChange={(e) => setQ(e.target.value)} />
        </label>
      </div>
      <ul className="picker-list">
        {entries.data?.items.map((entry) => (
          <li key={entry.id}>
            <span>
              {entry.title || t('list.untitled')} <span className="muted">/{entry.slug}</span>
            </span>
            <button type="button" onClick={() => onPick(entry)} aria-label={`${t('picker.select')}: ${entry.title || entry.slug}`}>
              {t('picker.select')}
            </button>
          </li>
        ))}
      </ul>
      <div className="dialog-actions">
        <button type="button" onClick={onClose}>
          {t('picker.close')}
        </button>
      </div>
    </Modal>
  );
}
