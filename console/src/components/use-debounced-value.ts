import { useEffect, useState } from 'react';

/** How long a search box waits after the last keystroke before it asks the server. */
const SEARCH_DEBOUNCE_MS = 250;

/**
 * The value once it has stopped changing for `delayMs`: a search typed into a box is sent once, when the
 * typing pauses, instead of once per keystroke.
 */
export function useDebouncedValue<T>(value: T, delayMs = SEARCH_DEBOUNCE_MS): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}
