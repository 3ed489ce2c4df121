import { useState } from 'react';
import { useI18n } from '../i18n/i18n.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import type { FieldDefinition } from '../api/shapes.ts';
import { isRichTextDocument, localeValue, withLocaleValue } from './localized.ts';

/** What a machine translation filled and left, as the API answers it (POST /entries/{id}/translate). */
export interface TranslationOutcome {
  translated: number;
  skipped: number;
}

/** Nothing to keep: no value, an empty string, or a rich-text document of empty paragraphs. */
export function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (!isRichTextDocument(value)) return false;
  return !(value.content ?? []).some((node) => {
    const n = node as { type?: string; content?: unknown[] };
    return n.type !== 'paragraph' || (n.content?.length ?? 0) > 0;
  });
}

/**
 * The values `target` lacks, copied from `source` for every localized field: a field that already has a value
 * in `target` keeps it. Pure: answers the new values and what it did.
 */
export function copyMissingLocaleValues(values: Record<string, unknown>, fields: readonly FieldDefinition[], source: string, target: string, defaultLocale: string): { values: Record<string, unknown>; copied: number; kept: number } {
  const next = { ...values };
  let copied = 0;
  let kept = 0;
  for (const field of fields) {
    const from = localeValue(values[field.key], source, defaultLocale);
    if (isEmptyValue(from)) continue;
    if (!isEmptyValue(localeValue(values[field.key], target, defaultLocale))) {
      kept++;
      continue;
    }
    next[field.key] = withLocaleValue(next[field.key], target, defaultLocale, structuredClone(from));
    copied++;
  }
  return { values: next, copied, kept };
}

/**
 * In a locale's tab: fill its empty fields from another locale, by copying (here, in the editor: saved as the
 * next revision like any typing) or by machine translation (the service's provider, saved by the service as a
 * new draft). Values the tab already has are never replaced.
 */
export function LocaleFill({ target, locales, fields, values, defaultLocale, onChange, onTranslate }: {
  target: string;
  locales: readonly string[];
  fields: readonly FieldDefinition[];
  values: Record<string, unknown>;
  defaultLocale: string;
  onChange: (next: Record<string, unknown>) => void;
  onTranslate?: (source: string, target: string) => Promise<TranslationOutcome | null>;
}) {
  const { t } = useI18n();
  const others = locales.filter((locale) => locale !== target);
  const [source, setSource] = useState(others.includes(defaultLocale) ? defaultLocale : others[0]!);
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const upper = (locale: string) => locale.toUpperCase();

  const copy = () => {
    setError(null);
    const result = copyMissingLocaleValues(values, fields, source, target, defaultLocale);
    if (result.copied > 0) onChange(result.values);
    setMessage(t('fill.copied', { copied: result.copied, kept: result.kept, source: upper(source) }));
  };
  const translate = async () => {
    if (!onTranslate) return;
    setBusy(true);
    setError(null);
    setMessage('');
    try {
      const outcome = await onTranslate(source, target);
      if (outcome) setMessage(t('fill.translated', { translated: outcome.translated, skipped: outcome.skipped, source: upper(source) }));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="locale-fill" role="group" aria-label={t('fill.group', { locale: upper(target) })}>
      <div className="row">
        <label>
          {t('fill.from')}{' '}
          <select value={source} onChange={(e) => setSource(e.target.value)}>
            {others.map((locale) => (
              <option key={locale} value={locale}>
                {upper(locale)}
              </option>
            ))}
          </select>
        </label>
        <button type="button" disabled={busy} onClick={copy}>
          {t('fill.copy')}
        </button>
        {onTranslate && (
          <button type="button" disabled={busy} onClick={() => void translate()}>
            {t('fill.translate')}
          </button>
        )}
        <span role="status" className="small">
          {busy ? t('fill.translating') : message}
        </span>
      </div>
      <ErrorMessage error={error} />
    </div>
  );
}
