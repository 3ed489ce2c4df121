import { useEffect, useRef, type ReactNode } from 'react';

/**
 * A modal dialog on the native <dialog> element: showModal() makes the rest of the page inert, traps
 * focus and closes on Escape, as the WAI-ARIA dialog pattern asks. On closing, the focus goes back to where it
 * was before the dialog opened (a field being typed in goes on taking keys: the sign-in dialog of an expired
 * session closes over the text that was being typed).
 */
export function Modal({ open, title, onClose, children, wide }: { open: boolean; title: string; onClose?: () => void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const returnTo = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      returnTo.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.showModal();
    }
    if (!open && dialog.open) {
      dialog.close();
      const previous = returnTo.current;
      returnTo.current = null;
      if (previous?.isConnected && !previous.closest('dialog')) {
        // Moved away and back, so that the browser takes keys in it again (restored focus alone may not).
        previous.blur();
        previous.focus();
      }
    }
  }, [open]);
  return (
    <dialog
      ref={ref}
      className={wide ? 'modal modal-wide' : 'modal'}
      aria-labelledby="modal-title"
      onCancel={(event) => {
        event.preventDefault();
        onClose?.();
      }}
    >
      {open && (
        <>
          <h2 id="modal-title">{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}
