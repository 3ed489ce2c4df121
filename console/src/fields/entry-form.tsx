import { lazy, Suspense } from 'react';
import * as Tabs from '@radix-ui/react-tabs';
import { useI18n } from '../i18n/i18n.tsx';
import type { FieldDefinition, FormSet } from '../api/shapes.ts';
import type { FieldErrors } from './field-errors.ts';
import { isLocalized, localeValue, withLocaleValue } from './localized.ts';
import { AssetField, GalleryField } from './asset-fields.tsx';
import { ChoiceField } from './choice-fields.tsx';
import { DateField } from './date-field.tsx';
import { EntryRefField } from './entry-ref-field.tsx';
import { VideoField } from './video-field.tsx';
import { LocaleFill, type TranslationOutcome } from './locale-fill.tsx';
import { ReadOnlyFields } from './read-only.tsx';

const RichTextEditor = lazy(() => import('./rich-text-editor.tsx'));

export type EntryValues = Record<string, unknown>;

interface EntryFormProps {
  formSet: FormSet;
  locales: { locales: string[]; defaultLocale: string };
  values: EntryValues;
  onChange: (next: EntryValues) => void;
  errors: FieldErrors;
  /** Machine translation into a locale's empty fields (the service saves it as a new draft). */
  onTranslate?: (source: string, target: string) => Promise<TranslationOutcome | null>;
  /** The fields to read only (the user's role does not write in the form set); the locale tabs still switch. */
  readOnly?: boolean;
}

/**
 * The entry editor's fields, generated from the form set definition: localized fields (text, textarea,
 * tiptap unless locale_shared) under one tab per content locale, every other field once.
 */
export function EntryForm({ formSet, locales, values, onChange, errors, onTranslate, readOnly = false }: EntryFormProps) {
  const { t } = useI18n();
  const fields = orderedFields(formSet);
  const localized = fields.filter(isLocalized);
  const shared = fields.filter((f) => !isLocalized(f));
  const set = (key: string, next: unknown) => {
    const copy = { ...values };
    if (next === undefined) delete copy[key];
    else copy[key] = next;
    onChange(copy);
  };
  const localeHasError = (locale: string) => localized.some((f) => errors.has(`${f.key}.${locale}`) || (locale === locales.defaultLocale && errors.has(f.key)));
  return (
    <div className="entry-form">
      {localized.length > 0 && (
        <Tabs.Root defaultValue={locales.defaultLocale} className="locale-tabs">
          <Tabs.List aria-label={t('editor.localeTabs')}>
            {locales.locales.map((locale) => (
              <Tabs.Trigger key={locale} value={locale} className={localeHasError(locale) ? 'has-error' : ''}>
                {locale.toUpperCase()}
                {localeHasError(locale) ? ' ⚠' : ''}
              </Tabs.Trigger>
            ))}
          </Tabs.List>
          {locales.locales.map((locale) => (
            <Tabs.Content key={locale} value={locale} forceMount className="locale-panel">
              <ReadOnlyFields readOnly={readOnly}>
                {locales.locales.length > 1 && !readOnly && <LocaleFill target={locale} locales={locales.locales} fields={localized} values={values} defaultLocale={locales.defaultLocale} onChange={onChange} {...(onTranslate ? { onTranslate } : {})} />}
                {localized.map((field) => (
                  <Field
                    key={field.key}
                    field={field}
                    id={`field-${field.key}-${locale}`}
                    locale={locale}
                    required={Boolean(field.required) && locale === locales.defaultLocale}
                    value={localeValue(values[field.key], locale, locales.defaultLocale)}
                    onChange={(next) => set(field.key, emptyToUndefined(withLocaleValue(values[field.key], locale, locales.defaultLocale, next)))}
                    errors={[...(errors.get(`${field.key}.${locale}`) ?? []), ...(locale === locales.defaultLocale ? (errors.get(field.key) ?? []) : [])]}
                  />
                ))}
              </ReadOnlyFields>
            </Tabs.Content>
          ))}
        </Tabs.Root>
      )}
      {shared.length > 0 && (
        <section className="shared-fields" aria-labelledby="shared-fields-title">
          <h2 id="shared-fields-title">{t('editor.shared')}</h2>
          <ReadOnlyFields readOnly={readOnly}>
            {shared.map((field) => (
              <Field key={field.key} field={field} id={`field-${field.key}`} required={Boolean(field.required)} value={values[field.key]} onChange={(next) => set(field.key, next)} errors={errors.get(field.key) ?? []} />
            ))}
          </ReadOnlyFields>
        </section>
      )}
    </div>
  );
}

function emptyToUndefined(map: Record<string, unknown>): Record<string, unknown> | undefined {
  return Object.keys(map).length ? map : undefined;
}

/** Fields in the order of the definition's blocks, then any not in a block. */
function orderedFields(formSet: FormSet): FieldDefinition[] {
  const byKey = new Map(formSet.definition.fields.map((f) => [f.key, f]));
  const ordered: FieldDefinition[] = [];
  for (const block of formSet.definition.blocks ?? []) for (const key of block.fieldKeys) if (byKey.has(key)) ordered.push(byKey.get(key)!);
  for (const field of formSet.definition.fields) if (!ordered.includes(field)) ordered.push(field);
  return ordered;
}

interface FieldProps {
  field: FieldDefinition;
  id: string;
  locale?: string;
  required: boolean;
  value: unknown;
  onChange: (next: unknown) => void;
  errors: string[];
}

/** One field: its label, help, input and the service's errors about it. */
function Field({ field, id, locale, required, value, onChange, errors }: FieldProps) {
  const { t } = useI18n();
  const helpId = field.description ? `${id}-help` : undefined;
  const errorId = errors.length ? `${id}-error` : undefined;
  const describedBy = [helpId, errorId].filter(Boolean).join(' ') || undefined;
  const compound = ['radio', 'multiselect', 'image', 'file', 'image_gallery', 'entry_ref', 'tiptap', 'date'].includes(field.type);
  const labelText = (
    <>
      {field.label}
      {locale ? <span className="muted"> ({locale})</span> : null}
      {required ? <span className="required"> ({t('editor.required')})</span> : null}
    </>
  );
  return (
    <div className={`field field-${field.type}${errors.length ? ' invalid' : ''}`} data-field={field.key}>
      {compound ? (
        <span className="label" id={`${id}-label`}>
          {labelText}
        </span>
      ) : (
        <label htmlFor={id} id={`${id}-label`} className="label">
          {labelText}
        </label>
      )}
      {field.description && (
        <p id={helpId} className="help">
          {field.description}
        </p>
      )}
      <FieldInput field={field} id={id} value={value} onChange={onChange} {...(describedBy ? { describedBy } : {})} invalid={errors.length > 0} required={required} />
      {errors.length > 0 && (
        <p id={errorId} className="field-error" role="alert">
          {errors.join('; ')}
        </p>
      )}
    </div>
  );
}

function FieldInput({ field, id, value, onChange, describedBy, invalid, required }: { field: FieldDefinition; id: string; value: unknown; onChange: (next: unknown) => void; describedBy?: string; invalid: boolean; required: boolean }) {
  const { t } = useI18n();
  const common = { id, 'aria-describedby': describedBy, 'aria-invalid': invalid || undefined, 'aria-required': required || undefined };
  const text = typeof value === 'string' ? value : '';
  switch (field.type) {
    case 'text':
      return <input type="text" {...common} value={text} maxLength={field.limits?.maxLength} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)} />;
    case 'url':
      return <input type="url" {...common} value={text} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)} />;
    case 'textarea':
      return <textarea {...common} rows={4} value={text} maxLength={field.limits?.maxLength} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)} />;
    case 'number':
      return (
        <input
          type="number"
          {...common}
          value={typeof value === 'number' ? value : ''}
          min={field.limits?.min}
          max={field.limits?.max}
          step={field.limits?.integer ? 1 : 'any'}
          onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
        />
      );
    case 'boolean':
      return (
        <label className="inline">
          <input type="checkbox" {...common} checked={value === true} onChange={(e) => onChange(e.target.checked)} />
          {t('field.yes')}
        </label>
      );
    case 'date':
      return <DateField id={id} value={value} onChange={onChange} labelledBy={`${id}-label`} {...(describedBy ? { describedBy } : {})} />;
    case 'select':
    case 'radio':
    case 'multiselect':
      return <ChoiceField id={id} field={field} value={value} onChange={onChange} {...(describedBy ? { describedBy } : {})} />;
    case 'image':
    case 'file':
      return <AssetField id={id} kind={field.type} value={value} onChange={onChange} />;
    case 'image_gallery':
      return <GalleryField id={id} value={value} onChange={onChange} />;
    case 'video_embed':
      return <VideoField id={id} value={value} onChange={onChange} {...(describedBy ? { describedBy } : {})} />;
    case 'entry_ref':
      return <EntryRefField value={value} onChange={onChange} />;
    case 'tiptap':
      return (
        <Suspense fallback={<p className="muted">{t('field.richTextLoading')}</p>}>
          <RichTextEditor id={id} value={value} onChange={onChange} labelledBy={`${id}-label`} {...(describedBy ? { describedBy } : {})} />
        </Suspense>
      );
  }
}
