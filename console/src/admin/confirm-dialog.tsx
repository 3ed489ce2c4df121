import type { ReactNode } from 'react';
import { useI18n } from '../i18n/i18n.tsx';
import { Modal } from '../components/modal.tsx';

/** A destructive action asked again, saying what it destroys; Escape or Cancel keeps everything. */
export function ConfirmDialog({ open, title, confirmLabel, onConfirm, onCancel, children, busy }: { open: boolean; title: string; confirmLabel: string; onConfirm: () => void; onCancel: () => void; children: ReactNode; busy?: boolean }) {
  const { t } = useI18n();
  return (
    <Modal open={open} title={title} onClose={onCancel}>
      {children}
      <div className="dialog-actions">
        <button type="button" onClick={onCancel}>
          {t('admin.cancel')}
        </button>
        <button type="button" className="danger" disabled={busy} onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </Modal>
  );
}
