/**
 * The instant an entry event took effect, as the as-of reads count it: the time its decision wrote into the
 * event (a publication's `publishedAt`, a save's `savedAt`) when it has one, else the time the log stamped it
 * with (`occurredAt`). Pure.
 *
 * Since commands run at one instant (src/application/command-handler.ts) the two are equal. Events written
 * before carry a decision time read from the clock a moment before the log stamped them (1 ms or so; a
 * scheduled publication, the time the publishing job started its pass): taking the decision's time makes an
 * entry read as published at the instant its own `publishedAt` names, on a log that is read as written, never
 * rewritten. A decision time after `occurredAt` (which no version wrote) or one that does not parse counts as
 * `occurredAt`.
 */
export function entryEventInstantMs(type: string, data: unknown, occurredAt: string): number {
  const logged = Date.parse(occurredAt);
  const field = DECISION_TIME[type];
  if (field === undefined || data === null || typeof data !== 'object') return logged;
  const decided = Date.parse(String((data as Record<string, unknown>)[field]));
  return Number.isNaN(decided) || decided > logged ? logged : decided;
}

/** The field holding the time a decision wrote into its event, by event type. */
const DECISION_TIME: Record<string, string> = {
  'entry.revision-published': 'publishedAt',
  'entry.revision-saved': 'savedAt',
};
