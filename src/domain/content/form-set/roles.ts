import type { FieldType } from './field-types.ts';

/**
 * SEO roles (form-set settings map fields to them, spec section 2) and widget roles (title, thumbnail,
 * description, date, category). A role maps to one field key; the field must be of a compatible type.
 */
export const SEO_ROLES = ['title', 'description', 'image', 'date', 'author'] as const;
export type SeoRole = (typeof SEO_ROLES)[number];

export const WIDGET_ROLES = ['title', 'thumbnail', 'description', 'date', 'category'] as const;
export type WidgetRole = (typeof WIDGET_ROLES)[number];

export type SeoRoles = Partial<Record<SeoRole, string>>;
export type WidgetRoles = Partial<Record<WidgetRole, string>>;

export const SEO_ROLE_FIELD_TYPES: Readonly<Record<SeoRole, readonly FieldType[]>> = {
  title: ['text'],
  description: ['text', 'textarea', 'tiptap'],
  image: ['image'],
  date: ['date'],
  author: ['text', 'select', 'radio', 'entry_ref'],
};

export const WIDGET_ROLE_FIELD_TYPES: Readonly<Record<WidgetRole, readonly FieldType[]>> = {
  title: ['text'],
  thumbnail: ['image', 'image_gallery'],
  description: ['text', 'textarea', 'tiptap'],
  date: ['date'],
  category: ['select', 'radio', 'multiselect', 'text'],
};

/**
 * Field names the service infers an SEO role from when the form set leaves that role unmapped
 * (spec section 2: "infers from common field names (title, body)"), most specific first.
 */
export const SEO_ROLE_INFERENCE: Readonly<Record<SeoRole, readonly string[]>> = {
  title: ['title', 'name', 'headline'],
  description: ['meta_description', 'description', 'summary', 'excerpt', 'body'],
  image: ['og_image', 'image', 'thumbnail', 'cover_image', 'main_image'],
  date: ['published_date', 'published_at', 'date'],
  author: ['author'],
};

interface RoleField {
  key: string;
  type: FieldType;
}

/**
 * The SEO roles in effect: the mapped ones, and for each unmapped role the first field named as in
 * SEO_ROLE_INFERENCE whose type suits the role.
 */
export function resolveSeoRoles(definition: { fields: readonly RoleField[]; seoRoles: SeoRoles }): SeoRoles {
  const resolved: SeoRoles = {};
  const byKey = new Map(definition.fields.map((f) => [f.key, f]));
  for (const role of SEO_ROLES) {
    const mapped = definition.seoRoles[role];
    if (mapped !== undefined) {
      resolved[role] = mapped;
      continue;
    }
    const inferred = SEO_ROLE_INFERENCE[role].find((key) => {
      const field = byKey.get(key);
      return field !== undefined && SEO_ROLE_FIELD_TYPES[role].includes(field.type);
    });
    if (inferred !== undefined) resolved[role] = inferred;
  }
  return resolved;
}

/** The widgetRoles object of entry responses (spec section 2): field key → role. */
export function widgetRolesByField(widgetRoles: WidgetRoles): Record<string, WidgetRole> {
  const byField: Record<string, WidgetRole> = {};
  for (const role of WIDGET_ROLES) {
    const key = widgetRoles[role];
    if (key !== undefined && !(key in byField)) byField[key] = role;
  }
  return byField;
}
