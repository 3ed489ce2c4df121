import type { Decider } from '../../decider.ts';
import { conflict, forbidden, invalid, notFound } from '../../domain-error.ts';
import type { Principal } from '../../principal.ts';
import { formSetDefinitionSchema, removedParts, validateFormSetDefinition, type FormSetDefinition } from './form-set-definition.ts';
import type { FormSetEvent } from './form-set-events.ts';
import { assertMayChangeSchema, assertMayDeleteSchema } from './schema-policy.ts';

export interface ExistingFormSet {
  status: 'active' | 'deleted';
  projectId: string;
  definition: FormSetDefinition;
  /** 1 on creation, +1 per update. */
  version: number;
}
export type FormSetState = { status: 'absent' } | ExistingFormSet;

/**
 * Commands on one form set (stream `form-set-${id}`). Definitions arrive unparsed: the decider checks them
 * and names every problem. Slug uniqueness within the project is not decided here: the application
 * reserves slugs in their own streams (DESIGN.md).
 */
export type FormSetCommand =
  | { type: 'create_form_set'; projectId: string; definition: unknown }
  /** The full new definition; `id` may be left out. A field or block it leaves out is deleted. */
  | { type: 'update_form_set'; definition: unknown; expectedVersion?: number }
  | { type: 'remove_form_block'; blockId: string }
  | { type: 'remove_field_definition'; fieldKey: string }
  | { type: 'delete_form_set' };

export interface FormSetContext {
  principal: Principal;
}

type Active = ExistingFormSet & { status: 'active' };

export const formSetDecider: Decider<FormSetState, FormSetCommand, FormSetEvent, FormSetContext> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'form-set.created':
        return { status: 'active', projectId: event.data.projectId, definition: event.data.definition, version: event.data.version };
      case 'form-set.updated':
        if (state.status === 'absent') return state;
        return { ...state, definition: event.data.definition, version: event.data.version };
      case 'form-set.deleted':
        if (state.status === 'absent') return state;
        return { ...state, status: 'deleted' };
      default:
        return state;
    }
  },

  decide(command, state, { principal }) {
    if (command.type === 'create_form_set') {
      if (principal.kind === 'agent' && principal.projectId !== command.projectId) {
        throw forbidden('An agent key acts only in the project that issued it.');
      }
      assertMayChangeSchema(principal, 'create form sets');
      if (state.status !== 'absent') throw conflict('A form set with this id already exists.');
      const definition = validateFormSetDefinition(command.definition);
      return [{ type: 'form-set.created', data: { projectId: command.projectId, version: 1, definition } }];
    }

    const current = requireActive(state, principal);
    switch (command.type) {
      case 'update_form_set': {
        assertMayChangeSchema(principal, 'change form sets');
        if (command.expectedVersion !== undefined && command.expectedVersion !== current.version) {
          throw conflict(`The form set is at version ${current.version}, not ${command.expectedVersion}: it changed since it was read.`, 'Read it again and reapply the change.');
        }
        const input = command.definition;
        if (isObject(input) && input.id !== undefined && input.id !== current.definition.id) {
          throw invalid(`Invalid form set definition: id: cannot change (the form set's id is ${current.definition.id})`);
        }
        const definition = validateFormSetDefinition(isObject(input) ? { ...input, id: current.definition.id } : input);
        assertNoBreakingChange(current.definition, definition);
        return updated(current, definition, principal);
      }
      case 'remove_form_block': {
        assertMayDeleteSchema(principal, `block "${command.blockId}"`);
        if (!current.definition.blocks.some((b) => b.id === command.blockId)) throw notFound(`The form set has no block "${command.blockId}".`);
        const definition = { ...current.definition, blocks: current.definition.blocks.filter((b) => b.id !== command.blockId) };
        return updated(current, formSetDefinitionSchema.parse(definition), principal);
      }
      case 'remove_field_definition': {
        assertMayDeleteSchema(principal, `field "${command.fieldKey}"`);
        if (!current.definition.fields.some((f) => f.key === command.fieldKey)) throw notFound(`The form set has no field "${command.fieldKey}".`);
        return updated(current, withoutField(current.definition, command.fieldKey), principal);
      }
      case 'delete_form_set':
        assertMayDeleteSchema(principal, `form set "${current.definition.slug}"`);
        return [{ type: 'form-set.deleted', data: { projectId: current.projectId, formSetId: current.definition.id, slug: current.definition.slug } }];
    }
  },
};

function requireActive(state: FormSetState, principal: Principal): Active {
  // Another project's form set is reported as missing, never as forbidden (no existence leak).
  if (state.status !== 'active' || (principal.kind === 'agent' && principal.projectId !== state.projectId)) {
    throw notFound('Form set not found.');
  }
  return state as Active;
}

function updated(current: Active, definition: FormSetDefinition, principal: Principal): FormSetEvent[] {
  if (JSON.stringify(definition) === JSON.stringify(current.definition)) return [];
  const removed = removedParts(current.definition, definition);
  if (removed.fieldKeys.length > 0 || removed.blockIds.length > 0) {
    const parts = [...removed.fieldKeys.map((k) => `field "${k}"`), ...removed.blockIds.map((b) => `block "${b}"`)];
    assertMayDeleteSchema(principal, parts.join(', '));
  }
  return [
    {
      type: 'form-set.updated',
      data: { projectId: current.projectId, version: current.version + 1, definition, removedFieldKeys: removed.fieldKeys, removedBlockIds: removed.blockIds },
    },
  ];
}

/** Types whose stored values another type reads as they are: plain text moves between one line and several, a URL is text. */
const COMPATIBLE_TYPES: Readonly<Record<string, readonly string[]>> = {
  text: ['textarea'],
  textarea: ['text'],
  url: ['text', 'textarea'],
};

/**
 * A change to a kept field that would leave the values entries already hold unreadable is refused, with what to
 * do instead: its type (but for the compatible ones above), whether its values are per locale (locale_shared),
 * and the master a select field takes its values from. Other changes (labels, limits, required, order, new
 * fields) apply to the next save of each entry.
 */
function assertNoBreakingChange(before: FormSetDefinition, after: FormSetDefinition): void {
  const problems: string[] = [];
  for (const field of after.fields) {
    const was = before.fields.find((f) => f.key === field.key);
    if (!was) continue;
    if (was.type !== field.type && !COMPATIBLE_TYPES[was.type]?.includes(field.type)) {
      problems.push(`field "${field.key}": its type cannot change from ${was.type} to ${field.type}, as the values entries hold would no longer fit`);
    }
    if (was.locale_shared !== field.locale_shared) {
      problems.push(`field "${field.key}": locale_shared cannot change (${was.locale_shared ? 'one value for every locale' : 'a value per locale'} is how entries hold it)`);
    }
    if (was.masterEntityKey !== field.masterEntityKey && was.masterEntityKey !== undefined) {
      problems.push(`field "${field.key}": its master cannot change from ${was.masterEntityKey} to ${field.masterEntityKey ?? 'none'}, as entries hold that master's record values`);
    }
  }
  if (problems.length > 0) {
    throw invalid(`Invalid form set definition: ${problems.join('; ')}.`, 'Add a field with a new key for the new kind of value (and remove this one once its values are moved).');
  }
}

/** The definition without one field: taken out of its block and unmapped from every role. */
function withoutField(definition: FormSetDefinition, key: string): FormSetDefinition {
  const unmap = <R extends Record<string, string | undefined>>(roles: R): R =>
    Object.fromEntries(Object.entries(roles).filter(([, k]) => k !== key)) as R;
  return formSetDefinitionSchema.parse({
    ...definition,
    fields: definition.fields.filter((f) => f.key !== key),
    blocks: definition.blocks.map((b) => ({ ...b, fieldKeys: b.fieldKeys.filter((k) => k !== key) })),
    seoRoles: unmap(definition.seoRoles),
    widgetRoles: unmap(definition.widgetRoles),
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
