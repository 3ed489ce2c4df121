import { useState } from 'react';
import { useI18n } from '../i18n/i18n.tsx';

/** Copies a secret to the clipboard and says so (a live region, for screen readers too). */
export function CopyButton({ text }: { text: string }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState<boolean | null>(null);
  return (
    <>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {t('admin.copy')}
      </button>
      <span role="status" className="muted small">
        {copied === true ? t('admin.copied') : copied === false ? t('admin.copyFailed') : ''}
      </span>
    </>
  );
}

/** A secret in the one answer that holds it: a warning, the value to select or copy, and a way on once stored. */
export function ShownOnce({ warning, label, value, onStored }: { warning: string; label: string; value: string; onStored: () => void }) {
  const { t } = useI18n();
  return (
    <>
      <p className="notice" role="alert">
        {warning}
      </p>
      <label>
        {label}
        <input type="text" readOnly value={value} className="secret" onFocus={(e) => e.target.select()} />
      </label>
      <div className="dialog-actions">
        <CopyButton text={value} />
        <button type="button" className="primary" onClick={onStored}>
          {t('admin.stored')}
        </button>
      </div>
    </>
  );
}
