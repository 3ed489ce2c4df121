import { useI18n } from '../i18n/i18n.tsx';

type DateValue = string | { from: string; to: string } | undefined;

/**
 * date: one date (YYYY-MM-DD) or a range {from, to}. Date-times stored by other clients are kept as text. Each
 * input is named by the field's label (`labelledBy`), a range's two by it and "From" / "To".
 */
export function DateField({ id, value, onChange, describedBy, labelledBy }: { id: string; value: unknown; onChange: (next: unknown) => void; describedBy?: string; labelledBy: string }) {
  const { t } = useI18n();
  const current = value as DateValue;
  const isRange = typeof current === 'object' && current !== null;
  const input = (inputId: string, v: string, set: (next: string) => void, part?: string) => (
    <>
      {part && (
        <span id={`${inputId}-part`} className="visually-hidden">
          {part}
        </span>
      )}
      <input id={inputId} type={v.includes('T') ? 'text' : 'date'} value={v} aria-describedby={describedBy} aria-labelledby={part ? `${labelledBy} ${inputId}-part` : labelledBy} onChange={(e) => set(e.target.value)} />
    </>
  );
  return (
    <div className="date-field">
      {isRange ? (
        <div className="row">
          {input(id, current.from, (from) => onChange({ from, to: current.to }), t('field.from'))}
          <span aria-hidden="true">–</span>
          {input(`${id}-to`, current.to, (to) => onChange({ from: current.from, to }), t('field.to'))}
        </div>
      ) : (
        input(id, typeof current === 'string' ? current : '', (v) => onChange(v || undefined))
      )}
      <label className="inline">
        <input
          type="checkbox"
          checked={isRange}
          onChange={(e) => {
            if (e.target.checked) {
              const from = typeof current === 'string' ? current : '';
              onChange({ from, to: from });
            } else onChange(isRange ? current.from || undefined : current);
          }}
        />
        {t('field.range')}
      </label>
    </div>
  );
}
