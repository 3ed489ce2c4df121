import { useState } from 'react';
import { useI18n } from '../i18n/i18n.tsx';
import { FieldValue } from '../components/field-value.tsx';
import type { FieldClash } from '../fields/merge.ts';
import type { FieldDefinition } from '../api/shapes.ts';

/**
 * A save refused because someone else saved meanwhile. Values only one side changed merge by themselves; each
 * value both changed differently is named, both versions shown, and the user chooses theirs or mine before the
 * merged values go back into the editor (the next save, by hand or by autosave, stores them).
 */
export function ConflictPanel({
  theirRevision,
  myRevision,
  clashes,
  fields,
  onMerge,
  onDiscard,
}: {
  theirRevision: number;
  myRevision: number;
  clashes: FieldClash[];
  fields: FieldDefinition[];
  onMerge: (takeTheirs: ReadonlySet<string>) => void;
  onDiscard: () => void;
}) {
  const { t } = useI18n();
  const [choices, setChoices] = useState<ReadonlyMap<string, 'mine' | 'theirs'>>(new Map());
  const undecided = clashes.filter((clash) => !choices.has(clash.id));
  const choose = (id: string, side: 'mine' | 'theirs') => setChoices((current) => new Map(current).set(id, side));
  const merge = () => onMerge(new Set(clashes.filter((clash) => choices.get(clash.id) === 'theirs').map((clash) => clash.id)));
  const fieldOf = (key: string) => fields.find((field) => field.key === key);
  const label = (clash: FieldClash) => `${fieldOf(clash.key)?.label ?? clash.key}${clash.locale ? ` (${clash.locale})` : ''}`;
  return (
    <div className="conflict" role="alertdialog" aria-labelledby="conflict-title" aria-describedby="conflict-body">
      <h2 id="conflict-title">{t('editor.conflict.title')}</h2>
      <p id="conflict-body">
        {t('editor.conflict.body', { theirs: theirRevision, mine: myRevision })}
        {clashes.length > 0 && ` ${t('editor.conflict.clashes', { fields: clashes.map(label).join(', ') })}`}
      </p>
      {clashes.map((clash, i) => (
        <fieldset key={clash.id} className="clash">
          <legend>{label(clash)}</legend>
          {(['theirs', 'mine'] as const).map((side) => (
            <label key={side} className={`clash-side${choices.get(clash.id) === side ? ' chosen' : ''}`}>
              <input type="radio" name={`clash-${i}`} checked={choices.get(clash.id) === side} onChange={() => choose(clash.id, side)} />
              <span className="clash-title">{side === 'theirs' ? t('editor.conflict.theirs', { revision: theirRevision }) : t('editor.conflict.mine')}</span>
              <span className="clash-value">
                {clash[side] === undefined || clash[side] === '' ? <span className="muted">{t('editor.conflict.empty')}</span> : <FieldValue field={fieldOf(clash.key)} value={clash[side]} />}
              </span>
            </label>
          ))}
        </fieldset>
      ))}
      <div className="row">
        <button type="button" className="primary" disabled={undecided.length > 0} onClick={merge}>
          {clashes.length > 0 ? t('editor.conflict.apply') : t('editor.conflict.merge')}
        </button>
        <button type="button" onClick={onDiscard}>
          {t('editor.conflict.discard')}
        </button>
        {undecided.length > 0 && <span className="muted small">{t('editor.conflict.undecided', { count: undecided.length })}</span>}
      </div>
    </div>
  );
}
