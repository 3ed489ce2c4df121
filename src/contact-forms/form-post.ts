import type { ContactField } from '../domain/contact-form/contact-form-fields.ts';

/**
 * The form post as the JSON submit takes it: numbers as numbers, a tick as true (absent: not given),
 * multiselect as a list; reserved keys (`_challenge`, `_pow`) dropped; anything else as the first value.
 */
export function formToSubmission(fields: readonly ContactField[], raw: Record<string, unknown>): Record<string, unknown> {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === '_challenge' || key === '_pow') continue;
    const first = Array.isArray(value) ? value[0] : value;
    const field = byKey.get(key);
    if (!field) {
      out[key] = first;
      continue;
    }
    switch (field.type) {
      case 'number': {
        const text = typeof first === 'string' ? first.trim() : first;
        out[key] = text === '' ? undefined : typeof text === 'string' && /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(text) ? Number(text) : text;
        break;
      }
      case 'checkbox':
      case 'boolean':
        out[key] = first === 'true' || first === 'on' ? true : first === 'false' ? false : first;
        break;
      case 'multiselect':
        out[key] = Array.isArray(value) ? value : value === undefined ? undefined : [value];
        break;
      default:
        out[key] = first;
    }
  }
  return out;
}
