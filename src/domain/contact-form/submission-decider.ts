import type { Decider } from '../decider.ts';
import { conflict, notFound } from '../domain-error.ts';
import type { NoticeKind, SubmissionEvent } from './contact-form-events.ts';

export type SubmissionState =
  | { status: 'absent' }
  | { status: 'received' | 'erased'; projectId: string; formId: string; read: boolean; noteIds: string[] };

/**
 * Commands on one submission (stream `contact-submission-{id}`). Pure; permissions are checked by the
 * application before (submissions are personal data: console users only, see permissions.ts). Receiving
 * is the public write; a retried receive with the same id changes nothing.
 */
export type SubmissionCommand =
  | { type: 'receive'; projectId: string; formId: string; submissionId: string; formVersion: number; locale: string; sealedValues: string; notices: NoticeKind[] }
  | { type: 'set_read'; read: boolean }
  | { type: 'add_note'; noteId: string; sealedText: string }
  | { type: 'erase' };

export const submissionDecider: Decider<SubmissionState, SubmissionCommand, SubmissionEvent, { submissionId: string }> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'contact-submission.received':
        return { status: 'received', projectId: event.data.projectId, formId: event.data.formId, read: false, noteIds: [] };
      case 'contact-submission.read-changed':
        return state.status === 'absent' ? state : { ...state, read: event.data.read };
      case 'contact-submission.note-added':
        return state.status === 'absent' ? state : { ...state, noteIds: [...state.noteIds, event.data.noteId] };
      case 'contact-submission.erased':
        return state.status === 'absent' ? state : { ...state, status: 'erased' };
      default:
        return state;
    }
  },

  decide(command, state, { submissionId }) {
    if (command.type === 'receive') {
      if (state.status !== 'absent') return [];
      const { type: _type, ...data } = command;
      return [{ type: 'contact-submission.received', data }];
    }
    if (state.status === 'absent') throw notFound(`No submission ${submissionId}.`);
    const { projectId } = state;
    switch (command.type) {
      case 'set_read':
        return state.read === command.read ? [] : [{ type: 'contact-submission.read-changed', data: { projectId, submissionId, read: command.read } }];
      case 'add_note':
        if (state.status === 'erased') throw conflict('The submission was erased: it takes no more notes.');
        if (state.noteIds.includes(command.noteId)) return [];
        return [{ type: 'contact-submission.note-added', data: { projectId, submissionId, noteId: command.noteId, sealedText: command.sealedText } }];
      case 'erase':
        return state.status === 'erased' ? [] : [{ type: 'contact-submission.erased', data: { projectId, formId: state.formId, submissionId } }];
    }
  },
};
