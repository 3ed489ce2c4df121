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
