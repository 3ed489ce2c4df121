import { useState, type FormEvent, type ReactNode } from 'react';
import { useI18n } from '../i18n/i18n.tsx';
import { Modal } from './modal.tsx';
import { ErrorMessage } from './error-message.tsx';

/** What a dialog needs of the mutation it submits (react-query's useMutation result has it). */
export interface DialogMutation {
  isPending: boolean;
  error: unknown;
  reset: () => void;
}

/**
 * A modal form: its fields, the API's error, Cancel and one submit button, red with `danger` (delete, revoke,
 * disable, erase). Given the `mutation` it submits, it shows that mutation's error, waits while it runs, and
 * forgets the error when closed, so the next time it opens clean.
 */
export function FormDialog({ open, title, onClose, onSubmit, submitLabel, disabled, error, mutation, danger, children }: { open: boolean; title: string; onClose: () => void; onSubmit: () => void; submitLabel: string; disabled?: boolean; error?: unknown; mutation?: DialogMutation; danger?: boolean; children?: ReactNode }) {
  const { t } = useI18n();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit();
  };
  const close = () => {
    mutation?.reset();
    onClose();
  };
  return (
    <Modal open={open} title={title} onClose={close}>
      <form onSubmit={submit}>
        {children}
        <ErrorMessage error={error ?? mutation?.error} />
        <div className="dialog-actions">
          <button type="button" onClick={close}>
            {t('action.cancel')}
          </button>
          <button type="submit" className={danger ? 'danger' : 'primary'} disabled={disabled || mutation?.isPending}>
            {submitLabel}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** Reject with a reason (optional, up to 2000 characters), shown to the author. */
export function RejectDialog({ open, onClose, onReject, busy, error }: { open: boolean; onClose: () => void; onReject: (body: { reason?: string }) => void; busy?: boolean; error?: unknown }) {
  const { t } = useI18n();
  const [reason, setReason] = useState('');
  return (
    <FormDialog open={open} title={t('action.reject')} onClose={onClose} onSubmit={() => onReject(reason.trim() ? { reason: reason.trim() } : {})} submitLabel={t('action.reject')} disabled={Boolean(busy)} error={error}>
      <label>
        {t('action.rejectReason')}
        <textarea value={reason} maxLength={2000} rows={4} onChange={(e) => setReason(e.target.value)} />
      </label>
    </FormDialog>
  );
}
