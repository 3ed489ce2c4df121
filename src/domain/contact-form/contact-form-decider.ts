import { isDeepStrictEqual } from 'node:util';
import type { Decider } from '../decider.ts';
import { conflict, forbidden, notFound } from '../domain-error.ts';
import type { Principal } from '../principal.ts';
import { assertCan } from '../access/permissions.ts';
import type { ContactFormEvent } from './contact-form-events.ts';
import type { ContactFormSettings } from './contact-form-settings.ts';

export interface ExistingContactForm {
  status: 'active' | 'deleted';
  projectId: string;
  formId: string;
  settings: ContactFormSettings;
  /** 1 on creation, +1 per update. */
  version: number;
}
export type ContactFormState = { status: 'absent' } | ExistingContactForm;

/**
 * Commands on one contact form (stream `contact-form-{id}`). Settings arrive checked and normalised
 * (parseContactFormSettings) with the chat URL sealed; slug uniqueness is the application's (a
 * reservation per project). Creating and updating need `contact-forms.write` (tenant_admin, or an agent
 * key of scope full/schema); deleting needs `contact-forms.delete`, which agent keys never have (spec
 * section 5 rule 5).
 */
export type ContactFormCommand =
  | { type: 'create_contact_form'; projectId: string; formId: string; settings: ContactFormSettings }
  | { type: 'update_contact_form'; settings: ContactFormSettings; expectedVersion?: number }
  | { type: 'delete_contact_form' };

export interface ContactFormContext {
  principal: Principal;
}

export const contactFormDecider: Decider<ContactFormState, ContactFormCommand, ContactFormEvent, ContactFormContext> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'contact-form.created':
        return { status: 'active', projectId: event.data.projectId, formId: event.data.formId, settings: event.data.settings as ContactFormSettings, version: 1 };
      case 'contact-form.updated':
        return state.status === 'absent' ? state : { ...state, settings: event.data.settings as ContactFormSettings, version: event.data.version };
      case 'contact-form.deleted':
        return state.status === 'absent' ? state : { ...state, status: 'deleted' };
      default:
        return state;
    }
  },

  decide(command, state, { principal }) {
    if (command.type === 'create_contact_form') {
      assertCan(principal, 'contact-forms.write');
      if (principal.kind === 'agent' && principal.projectId !== command.projectId) throw forbidden('An agent key acts only in the project that issued it.');
      if (state.status !== 'absent') throw conflict('A contact form with this id already exists.');
      return [{ type: 'contact-form.created', data: { projectId: command.projectId, formId: command.formId, version: 1, settings: command.settings } }];
    }
    if (state.status !== 'active') throw notFound('No such contact form.');
    if (command.type === 'update_contact_form') {
      assertCan(principal, 'contact-forms.write');
      if (command.expectedVersion !== undefined && command.expectedVersion !== state.version) {
        throw conflict(`The contact form is at version ${state.version}, not ${command.expectedVersion}: it changed since it was read.`, 'Read it again and reapply the change.');
      }
      const changed = (Object.keys(command.settings) as Array<keyof ContactFormSettings>).filter((k) => !isDeepStrictEqual(command.settings[k], state.settings[k]));
      if (changed.length === 0) return [];
      return [{ type: 'contact-form.updated', data: { projectId: state.projectId, formId: state.formId, version: state.version + 1, settings: command.settings, changed } }];
    }
    assertCan(principal, 'contact-forms.delete');
    return [{ type: 'contact-form.deleted', data: { projectId: state.projectId, formId: state.formId, slug: state.settings.slug } }];
  },
};
