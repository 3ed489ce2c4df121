import { expect } from 'chai';
import type { DomainErrorCode } from '../../../../src/domain/domain-error.ts';
import { latestRevision, liveRevision, type EntryCommand, type EntryState } from '../../../../src/domain/content/entry/entry-decider.ts';
import type { EntryEvent } from '../../../../src/domain/content/entry/entry-events.ts';
import type { RevisionStatus } from '../../../../src/domain/content/entry/entry-workflow.ts';
import { ENTRY, NOW, R1, R2, context, ev, given, stateOf, type PrincipalName } from './support.ts';

/**
 * Every (status, trigger, role) of the workflow. The revision under test is r1; for superseded, r1 was
 * published and then replaced by r2. The scheduled revision's publishAt has passed at NOW, so the job's
 * cell is the "publish_at has passed" row (before it, see the decider tests).
 */
const PASSED_PUBLISH_AT = '2026-06-01T09:55:00.000Z';
const FUTURE = '2026-06-02T08:00:00.000Z';

const histories: Record<RevisionStatus, EntryEvent[]> = {
  draft: [ev.created(), ev.saved(R1, 1)],
  pending_review: [ev.created(), ev.saved(R1, 1), ev.submitted(R1, 1)],
  scheduled: [ev.created(), ev.saved(R1, 1), ev.submitted(R1, 1), ev.approved(R1, 1, PASSED_PUBLISH_AT)],
  published: [ev.created(), ev.saved(R1, 1), ev.submitted(R1, 1), ev.published(R1, 1, 'approve', { publishedAt: '2026-05-02T00:00:00.000Z' })],
  rejected: [ev.created(), ev.saved(R1, 1), ev.submitted(R1, 1), ev.rejected(R1, 1, 'pending_review')],
  superseded: [
    ev.created(),
    ev.saved(R1, 1),
    ev.submitted(R1, 1),
    ev.published(R1, 1, 'approve', { publishedAt: '2026-05-02T00:00:00.000Z' }),
    ev.saved(R2, 2),
    ev.submitted(R2, 2),
    ev.published(R2, 2, 'publish', { supersedes: R1, publishedAt: '2026-05-03T00:00:00.000Z' }),
  ],
};

const TRIGGERS = ['submit', 'approve-now', 'approve-with-date', 'reject', 'withdraw', 'reopen', 'publish', 'scheduled-job'] as const;
type Trigger = (typeof TRIGGERS)[number];
const ROLES = ['tenant_admin', 'tenant_user', 'agent(full)', 'agent(content)', 'scheduler'] as const satisfies readonly PrincipalName[];

/** r1 as the admin read model records it (used by the decider only once r1 is neither latest nor live). */
const recorded = { revisionId: R1, revision: 1, status: 'superseded' as const };
const commands: Record<Trigger, EntryCommand> = {
  submit: { type: 'submitForReview', entryId: ENTRY, revisionId: R1, revision: 1, recorded },
  'approve-now': { type: 'approve', entryId: ENTRY, revisionId: R1, revision: 1, recorded },
  'approve-with-date': { type: 'approve', entryId: ENTRY, revisionId: R1, revision: 1, publishAt: { at: FUTURE }, recorded },
  reject: { type: 'reject', entryId: ENTRY, revisionId: R1, revision: 1, recorded },
  withdraw: { type: 'withdraw', entryId: ENTRY, revisionId: R1, revision: 1, recorded },
  reopen: { type: 'reopen', entryId: ENTRY, revisionId: R1, revision: 1, recorded },
  publish: { type: 'publish', entryId: ENTRY, revisionId: R1, revision: 1, recorded },
  'scheduled-job': { type: 'publishScheduled', entryId: ENTRY },
};

/** Spec names of the triggers, which CONFLICT messages must contain. */
const specName: Record<Trigger, string> = {
  submit: 'submit_for_review',
  'approve-now': 'approve',
  'approve-with-date': 'approve',
  reject: 'reject',
  withdraw: 'withdraw',
  reopen: 'reopen',
  publish: 'publish',
  'scheduled-job': 'scheduled_publish',
};

/** Who may pull each trigger (spec section 5, and our choices: agents may not reject; the job is the system's). */
const MAY: Record<Trigger, readonly (typeof ROLES)[number][]> = {
  submit: ['tenant_admin', 'tenant_user', 'agent(full)', 'agent(content)'],
  'approve-now': ['tenant_admin', 'agent(full)', 'agent(content)'],
  'approve-with-date': ['tenant_admin', 'agent(full)', 'agent(content)'],
  reject: ['tenant_admin'],
  withdraw: ['tenant_admin', 'tenant_user', 'agent(full)', 'agent(content)'],
  reopen: ['tenant_admin', 'tenant_user', 'agent(full)', 'agent(content)'],
  publish: ['tenant_admin', 'agent(full)', 'agent(content)'],
  'scheduled-job': ['scheduler'],
};

type Outcome = { events: EntryEvent[]; to?: RevisionStatus } | { error: DomainErrorCode };
const C: Outcome = { error: 'CONFLICT' };
const STALE: Outcome = { error: 'REVISION_CONFLICT' };
const NOTHING: Outcome = { events: [] };

/** Spec section 3's table, cell by cell, for an allowed caller. */
const TABLE: Record<RevisionStatus, Record<Trigger, Outcome>> = {
  draft: {
    submit: { events: [ev.submitted(R1, 1)], to: 'pending_review' },
    'approve-now': C,
    'approve-with-date': C,
    reject: C,
    withdraw: C,
    reopen: C,
    publish: C,
    'scheduled-job': NOTHING,
  },
  pending_review: {
    submit: C,
    'approve-now': { events: [ev.published(R1, 1, 'approve')], to: 'published' },
    'approve-with-date': { events: [ev.approved(R1, 1, FUTURE)], to: 'scheduled' },
    reject: { events: [ev.rejected(R1, 1, 'pending_review')], to: 'rejected' },
    withdraw: { events: [ev.withdrawn(R1, 1, 'pending_review')], to: 'draft' },
    reopen: C,
    publish: { events: [ev.published(R1, 1, 'publish')], to: 'published' },
    'scheduled-job': NOTHING,
  },
  scheduled: {
    submit: C,
    'approve-now': C,
    'approve-with-date': C,
    reject: { events: [ev.rejected(R1, 1, 'scheduled')], to: 'rejected' },
    withdraw: { events: [ev.withdrawn(R1, 1, 'scheduled')], to: 'draft' },
    reopen: C,
    publish: C,
    'scheduled-job': { events: [ev.published(R1, 1, 'schedule', { publishAt: PASSED_PUBLISH_AT })], to: 'published' },
  },
  published: {
    submit: C,
    'approve-now': C,
    'approve-with-date': C,
    reject: C,
    withdraw: C,
    reopen: C,
    publish: { events: [], to: 'published' }, // already published: no duplicate event
    'scheduled-job': NOTHING,
  },
  rejected: {
    submit: C,
    'approve-now': C,
    'approve-with-date': C,
    reject: C,
    withdraw: C,
    reopen: { events: [ev.reopened(R1, 1)], to: 'draft' },
    publish: C,
    'scheduled-job': NOTHING,
  },
  // A superseded revision is never the latest: every trigger aimed at it is a stale revision.
  superseded: {
    submit: STALE,
    'approve-now': STALE,
    'approve-with-date': STALE,
    reject: STALE,
    withdraw: STALE,
    reopen: STALE,
    publish: STALE,
    'scheduled-job': NOTHING,
  },
};

/** r1's status: the aggregate keeps the latest revision; a published r1 that is no longer live was superseded. */
function statusOfR1(state: EntryState): RevisionStatus | undefined {
  const latest = latestRevision(state);
  if (latest?.revisionId === R1) return latest.status;
  return liveRevision(state)?.revisionId === R2 ? 'superseded' : undefined;
}

describe('entry workflow: every (status, trigger, role)', () => {
  let cells = 0;
  for (const status of Object.keys(histories) as RevisionStatus[]) {
    describe(`from ${status}`, () => {
      for (const trigger of TRIGGERS) {
        for (const role of ROLES) {
          const allowed = MAY[trigger].includes(role);
          const outcome: Outcome = allowed ? TABLE[status][trigger] : { error: 'FORBIDDEN' };
          const label = 'error' in outcome ? outcome.error : outcome.events.length === 0 ? 'no events' : `${outcome.events.map((e) => e.type).join(', ')} -> ${outcome.to}`;
          cells++;
          it(`${trigger} as ${role}: ${label}`, () => {
            const spec = given(histories[status]).when(commands[trigger], context(role));
            if ('error' in outcome) {
              const error = spec.thenFails(outcome.error);
              if (outcome.error === 'CONFLICT') {
                expect(error.message).to.include(status).and.to.include(specName[trigger]);
                expect(error.hint, 'a hint on what is allowed').to.be.a('string');
              }
              if (outcome.error === 'REVISION_CONFLICT') expect(error.hint).to.match(/reload/i);
              return;
            }
            const events = spec.then(outcome.events);
            if (outcome.to) {
              const after = stateOf([...histories[status], ...events]);
              expect(statusOfR1(after)).to.equal(outcome.to);
            }
          });
        }
      }
    });
  }
  it('covers 6 statuses x 8 triggers x 5 callers', () => {
    expect(cells).to.equal(6 * 8 * 5);
  });
});

describe('entry workflow: the statuses the table sets up', () => {
  for (const [status, history] of Object.entries(histories)) {
    it(`the ${status} history leaves r1 ${status}`, () => {
      expect(statusOfR1(stateOf(history))).to.equal(status);
    });
  }
  it('NOW is after the scheduled publishAt and before the approve date', () => {
    expect(NOW.getTime()).to.be.greaterThan(Date.parse(PASSED_PUBLISH_AT)).and.lessThan(Date.parse(FUTURE));
  });
});
