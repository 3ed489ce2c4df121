import { useI18n } from '../i18n/i18n.tsx';
import { FieldValue } from './field-value.tsx';
import type { Diff, FieldDefinition, FieldChange } from '../api/shapes.ts';
import type { MessageKey } from '../i18n/en.ts';

/** A field-level diff side by side: before on the left, after on the right; rich text rendered, with word changes. */
export function DiffView({ diff, fields, beforeTitle, afterTitle, before, after }: { diff: Diff; fields: FieldDefinition[]; beforeTitle: string; afterTitle: string; before?: Record<string, unknown>; after?: Record<string, unknown> }) {
  const snapshotValue = (values: Record<string, unknown> | undefined, change: FieldChange) => {
    const value = values?.[change.field];
    return change.locale && value && typeof value === 'object' ? (value as Record<string, unknown>)[change.locale] : value;
  };
  const { t } = useI18n();
  const fieldOf = (change: FieldChange) => fields.find((f) => f.key === change.field);
  const label = (change: FieldChange) => `${fields.find((f) => f.key === change.field)?.label ?? change.field}${change.locale ? ` (${change.locale})` : ''}`;
  if (diff.changes.length === 0) return <p>{t('review.noChanges')}</p>;
  return (
    <table className="diff">
      <thead>
        <tr>
          <th scope="col">{t('diff.field')}</th>
          <th scope="col">{beforeTitle}</th>
          <th scope="col">{afterTitle}</th>
        </tr>
      </thead>
      <tbody>
        {diff.changes.map((change, i) => (
          <tr key={i} className={`diff-${change.kind}`}>
            <th scope="row">
              {label(change)} <span className="badge">{t(`diff.${change.kind}` as MessageKey)}</span>
            </th>
            {change.blocks && (before || after) ? (
              <>
                <td>
                  <FieldValue field={fieldOf(change)} value={snapshotValue(before, change)} />
                </td>
                <td>
                  <FieldValue field={fieldOf(change)} value={snapshotValue(after, change)} />
                  <WordChanges blocks={change.blocks} />
                </td>
              </>
            ) : change.blocks ? (
              <td colSpan={2}>
                {change.blocks.map((block, j) => (
                  <div key={j} className="diff-block">
                    {block.words ? (
                      <p>
                        {block.words.map((w, k) =>
                          w.op === '=' ? <span key={k}>{w.text}</span> : w.op === '-' ? <del key={k}>{w.text}</del> : <ins key={k}>{w.text}</ins>,
                        )}
                      </p>
                    ) : (
                      <div className="row">
                        <div className="half">{block.before && <del>{block.before.text}</del>}</div>
                        <div className="half">{block.after && <ins>{block.after.text}</ins>}</div>
                      </div>
                    )}
                  </div>
                ))}
              </td>
            ) : (
              <>
                <td>
                  <FieldValue field={fieldOf(change)} value={change.before} />
                </td>
                <td>
                  <FieldValue field={fieldOf(change)} value={change.after} />
                </td>
              </>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function WordChanges({ blocks }: { blocks: NonNullable<FieldChange['blocks']> }) {
  return (
    <div className="word-changes">
      {blocks
        .filter((b) => b.words)
        .map((block, j) => (
          <p key={j}>
            {block.words!.map((w, k) => (w.op === '=' ? <span key={k}>{w.text}</span> : w.op === '-' ? <del key={k}>{w.text}</del> : <ins key={k}>{w.text}</ins>))}
          </p>
        ))}
    </div>
  );
}
