import { useCallback, useEffect, useState } from 'react';

/**
 * What was typed and not yet saved, kept in the tab's sessionStorage at every change, so that nothing typed is
 * lost when a page fails (its error boundary), the tab is reloaded or a save cannot be made: the page offers it
 * back when it opens again. It is removed once saved or discarded, and for the user on sign-out. sessionStorage
 * belongs to the tab and goes with it; it holds content, never credentials.
 */
export interface KeptInput<V> {
  values: V;
  /** The revision the values were typed on (none for a new entry). */
  baseRevision?: number;
  /** When they were last typed (ms since the epoch). */
  at: number;
}

const PREFIX = 'annals.kept.';

const keyOf = (userId: string, what: string) => `${PREFIX}${userId}.${what}`;

function read<V>(key: string): KeptInput<V> | null {
  try {
    const text = sessionStorage.getItem(key);
    return text ? (JSON.parse(text) as KeptInput<V>) : null;
  } catch {
    return null;
  }
}

/**
 * Keeps `values` under `what` (for one user) while `dirty`, and forgets them when not; `kept` is what an earlier
 * visit left, read once when the page opens, until it is restored or discarded.
 */
export function useKeptInput<V>(userId: string, what: string, values: V, dirty: boolean, baseRevision?: number) {
  const key = keyOf(userId, what);
  const [kept, setKept] = useState<KeptInput<V> | null>(() => read<V>(key));
  useEffect(() => {
    try {
      // The newest typing is kept; an earlier visit's values stay kept until restored or discarded, or typed over.
      if (dirty) sessionStorage.setItem(key, JSON.stringify({ values, ...(baseRevision === undefined ? {} : { baseRevision }), at: Date.now() } satisfies KeptInput<V>));
      else if (!kept) sessionStorage.removeItem(key);
    } catch {
      // Storage full or refused: the page keeps the values as long as it lives.
    }
  }, [key, values, dirty, baseRevision, kept]);
  const settle = useCallback(() => {
    setKept(null);
    try {
      sessionStorage.removeItem(key);
    } catch {
      /* nothing kept */
    }
  }, [key]);
  return { kept, settle };
}

/** Forgets everything kept for a user (on sign-out). */
export function forgetKeptInput(userId: string): void {
  try {
    for (let i = sessionStorage.length - 1; i >= 0; i--) {
      const key = sessionStorage.key(i);
      if (key?.startsWith(keyOf(userId, ''))) sessionStorage.removeItem(key);
    }
  } catch {
    /* nothing kept */
  }
}
