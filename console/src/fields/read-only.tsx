import { createContext, useContext, type ReactNode } from 'react';

/** Whether the entry's fields are shown to read only (the user's role does not write in its form set). */
const ReadOnly = createContext(false);

export function useReadOnlyFields(): boolean {
  return useContext(ReadOnly);
}

/**
 * Fields to read only: a disabled fieldset disables every input, select and button inside it, and the rich-text
 * editor, which is no form control, asks useReadOnlyFields. Anything else is rendered as it is.
 */
export function ReadOnlyFields({ readOnly, children }: { readOnly: boolean; children: ReactNode }) {
  if (!readOnly) return children;
  return (
    <ReadOnly.Provider value={true}>
      <fieldset className="read-only-fields" disabled>
        {children}
      </fieldset>
    </ReadOnly.Provider>
  );
}
