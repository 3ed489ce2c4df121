import { FIELD_TYPES, LIMIT_BOUNDS, MASTER_VALUE_MAX_LENGTH } from '../form-set/field-types.ts';
import {
  BLOCK_ID_MAX_LENGTH,
  BLOCK_ID_PATTERN,
  DESCRIPTION_MAX_LENGTH,
  FIELD_KEY_MAX_LENGTH,
  FIELD_KEY_PATTERN,
  LABEL_MAX_LENGTH,
  MAX_BLOCKS_PER_FORM_SET,
  MAX_FIELDS_PER_FORM_SET,
  NAME_MAX_LENGTH,
} from '../form-set/form-set-definition.ts';
import { FORM_SET_SLUG_MAX_LENGTH, FORM_SET_SLUG_PATTERN } from '../form-set/form-set-slug.ts';
import { LOCALE_CODE_PATTERN } from '../form-set/locale-code.ts';
import { MASTER_LABEL_MAX_LENGTH, MASTER_NAME_MAX_LENGTH, MASTER_RECORD_VALUE_PATTERN, MAX_RECORDS_PER_MASTER } from '../master/master-entity.ts';
import { MASTER_KEY_MAX_LENGTH, MASTER_KEY_PATTERN } from '../master/master-key.ts';
import { SEO_ROLES, WIDGET_ROLES } from '../form-set/roles.ts';

/**
 * The published JSON Schemas (2020-12) of form blueprints and master blueprints. They describe the
 * shape; the rules that need more than one place of the document (unique keys, role and block
 * references, masterEntityKey resolution, parent cycles, clashes with the project) are checked by
 * planBlueprint / planMasterBlueprint, which report every problem at once.
 */
export const MAX_FORM_SETS_PER_BLUEPRINT = 50;
export const MAX_MASTERS_PER_BLUEPRINT = 50;
export const FORM_BLUEPRINT_SCHEMA_ID = 'urn:annals:schema:form-blueprint:v1';
export const MASTER_BLUEPRINT_SCHEMA_ID = 'urn:annals:schema:master-blueprint:v1';

/** Anything but blank. */
export const NOT_BLANK_PATTERN = '\\S';

const text = (maxLength: number, description?: string) => ({
  type: 'string',
  minLength: 1,
  maxLength,
  pattern: NOT_BLANK_PATTERN,
  ...(description ? { description } : {}),
});
const roleMap = (roles: readonly string[], description: string) => ({
  type: 'object',
  description,
  additionalProperties: false,
  properties: Object.fromEntries(roles.map((role) => [role, { $ref: '#/$defs/fieldKey' }])),
});

/** $defs shared by both blueprint schemas. */
const DEFS = {
  slug: {
    type: 'string',
    minLength: 1,
    maxLength: FORM_SET_SLUG_MAX_LENGTH,
    pattern: FORM_SET_SLUG_PATTERN.source,
    description: 'Lowercase letters, digits and single hyphens between them; unique within the project.',
  },
  fieldKey: {
    type: 'string',
    minLength: 1,
    maxLength: FIELD_KEY_MAX_LENGTH,
    pattern: FIELD_KEY_PATTERN.source,
    description: 'A lowercase letter followed by lowercase letters, digits or underscores; the key of the value in entry data.',
  },
  masterKey: {
    type: 'string',
    minLength: 1,
    maxLength: MASTER_KEY_MAX_LENGTH,
    pattern: MASTER_KEY_PATTERN.source,
    description: 'A lowercase letter followed by lowercase letters, digits, underscores or hyphens.',
  },
  recordValue: {
    type: 'string',
    minLength: 1,
    maxLength: MASTER_VALUE_MAX_LENGTH,
    pattern: MASTER_RECORD_VALUE_PATTERN.source,
    description: 'The record\'s stable identifier: what select, radio and multiselect fields store.',
  },
  limits: {
    type: 'object',
    description:
      'Limits by field type: text and textarea take minLength, maxLength, pattern; url takes maxLength, pattern; number takes min, max, integer; multiselect and image_gallery take maxItems; other types take none.',
    additionalProperties: false,
    properties: {
      minLength: { type: 'integer', minimum: 0, maximum: LIMIT_BOUNDS.maxLength },
      maxLength: { type: 'integer', minimum: 1, maximum: LIMIT_BOUNDS.maxLength },
      pattern: { type: 'string', minLength: 1, maxLength: LIMIT_BOUNDS.patternLength, description: 'An ECMAScript regular expression (unicode mode).' },
      min: { type: 'number' },
      max: { type: 'number' },
      integer: { type: 'boolean' },
      maxItems: { type: 'integer', minimum: 1, maximum: LIMIT_BOUNDS.maxItems },
    },
  },
  field: {
    type: 'object',
    additionalProperties: false,
    required: ['key', 'type', 'label'],
    properties: {
      key: { $ref: '#/$defs/fieldKey' },
      type: { enum: [...FIELD_TYPES] },
      label: text(LABEL_MAX_LENGTH),
      description: { type: 'string', maxLength: DESCRIPTION_MAX_LENGTH, description: 'Help text for editors and agents.' },
      required: { type: 'boolean', default: false, description: 'A value is required for the default locale.' },
      locale_shared: { type: 'boolean', default: false, description: 'text, textarea, tiptap: one value for all locales instead of one per locale.' },
      masterEntityKey: {
        $ref: '#/$defs/masterKey',
        description: 'Required for select, radio and multiselect (only for them): a master of the project or one defined in this blueprint.',
      },
      limits: { $ref: '#/$defs/limits' },
    },
  },
  block: {
    type: 'object',
    additionalProperties: false,
    required: ['label', 'fieldKeys'],
    properties: {
      id: {
        type: 'string',
        minLength: 1,
        maxLength: BLOCK_ID_MAX_LENGTH,
        pattern: BLOCK_ID_PATTERN.source,
        description: 'Optional; block-1, block-2, ... by position when left out.',
      },
      label: text(LABEL_MAX_LENGTH),
      fieldKeys: { type: 'array', maxItems: MAX_FIELDS_PER_FORM_SET, items: { $ref: '#/$defs/fieldKey' }, description: 'Keys of this form set\'s fields, in display order; a field is in at most one block.' },
    },
  },
  formSet: {
    type: 'object',
    additionalProperties: false,
    required: ['slug', 'name', 'fields'],
    properties: {
      slug: { $ref: '#/$defs/slug' },
      name: text(NAME_MAX_LENGTH),
      description: { type: ['string', 'null'], maxLength: DESCRIPTION_MAX_LENGTH },
      blocks: { type: 'array', maxItems: MAX_BLOCKS_PER_FORM_SET, items: { $ref: '#/$defs/block' } },
      fields: { type: 'array', minItems: 1, maxItems: MAX_FIELDS_PER_FORM_SET, items: { $ref: '#/$defs/field' } },
      seoRoles: roleMap(SEO_ROLES, 'SEO role → field key. title: text; description: text, textarea or tiptap; image: image; date: date; author: text, select, radio or entry_ref.'),
      widgetRoles: roleMap(WIDGET_ROLES, 'Widget role → field key. title: text; thumbnail: image or image_gallery; description: text, textarea or tiptap; date: date; category: select, radio, multiselect or text.'),
    },
  },
  masterRecord: {
    type: 'object',
    additionalProperties: false,
    required: ['value', 'labels'],
    properties: {
      value: { $ref: '#/$defs/recordValue' },
      labels: {
        type: 'object',
        description: 'Display name per locale, e.g. {"en": "News", "ja": "ニュース"}.',
        minProperties: 1,
        propertyNames: { pattern: LOCALE_CODE_PATTERN.source },
        additionalProperties: text(MASTER_LABEL_MAX_LENGTH),
      },
      order: { type: 'integer', minimum: 0, maximum: 1_000_000, description: 'Sort position among siblings; the record\'s position in the list when left out.' },
      parent: { anyOf: [{ $ref: '#/$defs/recordValue' }, { type: 'null' }], description: 'The value of the parent record, for trees; no cycles.' },
    },
  },
  master: {
    type: 'object',
    additionalProperties: false,
    required: ['key', 'name'],
    properties: {
      key: { $ref: '#/$defs/masterKey' },
      name: text(MASTER_NAME_MAX_LENGTH),
      records: { type: 'array', maxItems: MAX_RECORDS_PER_MASTER, items: { $ref: '#/$defs/masterRecord' } },
    },
  },
};

export const FORM_BLUEPRINT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: FORM_BLUEPRINT_SCHEMA_ID,
  title: 'annals form blueprint',
  description:
    'Form sets (fields, blocks, SEO and widget roles) and the masters behind their select, radio and multiselect fields, created together by POST /admin/v1/form-blueprints/apply. A master whose key already exists in the project is reused as it is.',
  type: 'object',
  additionalProperties: false,
  required: ['formSets'],
  properties: {
    $schema: { type: 'string' },
    name: { type: 'string', maxLength: NAME_MAX_LENGTH },
    description: { type: 'string', maxLength: DESCRIPTION_MAX_LENGTH },
    formSets: { type: 'array', minItems: 1, maxItems: MAX_FORM_SETS_PER_BLUEPRINT, items: { $ref: '#/$defs/formSet' } },
    masters: { type: 'array', maxItems: MAX_MASTERS_PER_BLUEPRINT, items: { $ref: '#/$defs/master' } },
  },
  $defs: DEFS,
} as const;

export const MASTER_BLUEPRINT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: MASTER_BLUEPRINT_SCHEMA_ID,
  title: 'annals master blueprint',
  description: 'Master entities with their records (trees through parent), created together; a key that already exists in the project is a conflict.',
  type: 'object',
  additionalProperties: false,
  required: ['masters'],
  properties: {
    $schema: { type: 'string' },
    name: { type: 'string', maxLength: NAME_MAX_LENGTH },
    description: { type: 'string', maxLength: DESCRIPTION_MAX_LENGTH },
    masters: { type: 'array', minItems: 1, maxItems: MAX_MASTERS_PER_BLUEPRINT, items: { $ref: '#/$defs/master' } },
  },
  $defs: DEFS,
} as const;
