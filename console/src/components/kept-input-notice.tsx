import { useI18n } from '../i18n/i18n.tsx';

/**
 * The offer of what was typed and not saved (fields/kept-input.ts), shown where an editor opens again: the new
 * entry page and the entry editor, each with its own message.
 */
export function KeptInputNotice({ message, onRestore, onDiscard }: { message: string; onRestore: () => void; onDiscard: () => void }) {
  const { t } = useI18n();
  return (
    <section className="notice kept-input" aria-labelledby="kept-input-title">
      <h2 id="kept-input-title" className="visually-hidden">
        {t('kept.title')}
      </h2>
      <p>{message}</p>
      <div className="row">
        <button type="button" className="primary" onClick={onRestore}>
          {t('kept.restore')}
        </button>
        <button type="button" onClick={onDiscard}>
          {t('kept.discard')}
        </button>
      </div>
    </section>
  );
}
