import { expect } from 'chai';
import { specify } from '../../../support/decider-spec.ts';
import { EventCatalog } from '../../../../src/event-store/event-catalog.ts';
import type { Principal } from '../../../../src/domain/principal.ts';
import { entryDecider, type EntryContext, type EntryState } from '../../../../src/domain/content/entry/entry-decider.ts';
import { entryEvents, type EntryEvent } from '../../../../src/domain/content/entry/entry-events.ts';
import { SCHEDULER, type EntryPrincipal } from '../../../../src/domain/content/entry/entry-workflow.ts';
import { fold } from '../../../../src/domain/decider.ts';

/** Deterministic UUIDs: id(1) = 00000000-0000-4000-8000-000000000001. */
export const id = (n: number): string => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;

export const PROJECT = id(900);
export const OTHER_PROJECT = id(901);
export const FORM_SET = id(800);
export const ENTRY = id(1);
export const R1 = id(101);
export const R2 = id(102);
export const R3 = id(103);
export const NOW = new Date('2026-06-01T10:00:00.000Z');
export const scope = { entryId: ENTRY, projectId: PROJECT, formSetId: FORM_SET };

export const principals = {
  tenant_admin: { kind: 'user', userId: 'u-admin', tenantId: 't1', role: 'tenant_admin' },
  tenant_user: { kind: 'user', userId: 'u-editor', tenantId: 't1', role: 'tenant_user' },
  'agent(full)': { kind: 'agent', keyId: 'k-full', tenantId: 't1', projectId: PROJECT, scope: 'full' },
  'agent(content)': { kind: 'agent', keyId: 'k-content', tenantId: 't1', projectId: PROJECT, scope: 'content' },
  'agent(schema)': { kind: 'agent', keyId: 'k-schema', tenantId: 't1', projectId: PROJECT, scope: 'schema' },
  'agent(other project)': { kind: 'agent', keyId: 'k-other', tenantId: 't2', projectId: OTHER_PROJECT, scope: 'full' },
  scheduler: SCHEDULER,
} satisfies Record<string, Principal | EntryPrincipal>;
export type PrincipalName = keyof typeof principals;

export const context = (who: PrincipalName = 'tenant_admin', overrides: Partial<EntryContext> = {}): EntryContext => ({
  principal: principals[who],
  plan: 'business',
  now: NOW,
  ...overrides,
});

const catalog = new EventCatalog(entryEvents);

/** Every decided event must pass its catalog schema, exactly as the event log would check on append. */
export function assertValidEvents(events: readonly EntryEvent[]): void {
  for (const event of events) {
    expect(() => catalog.validate(event.type, event.data), `${event.type} against its schema`).not.to.throw();
  }
}

export const stateOf = (events: readonly EntryEvent[]): EntryState => fold(entryDecider, events);

/** The kit's decider specification (test/support/decider-spec.ts): the entry decider, its catalog, a tenant_admin by default. */
export const given = specify(entryDecider, { catalog, context: () => context() });

// Event builders for histories and expectations.
export const ev = {
  created: (slug = 'hello-world', extra: Record<string, unknown> = {}): EntryEvent => ({ type: 'entry.created', data: { ...scope, slug, ...extra } }),
  saved: (revisionId: string, revision: number, snapshot: Record<string, unknown> = { title: `v${revision}` }, savedAt = '2026-05-01T00:00:00.000Z', extra: Record<string, unknown> = {}): EntryEvent => ({
    type: 'entry.revision-saved',
    data: { ...scope, revisionId, revision, snapshot, savedAt, ...extra },
  }),
  submitted: (revisionId: string, revision: number): EntryEvent => ({ type: 'entry.revision-submitted', data: { ...scope, revisionId, revision } }),
  approved: (revisionId: string, revision: number, publishAt: string): EntryEvent => ({ type: 'entry.revision-approved', data: { ...scope, revisionId, revision, publishAt } }),
  published: (revisionId: string, revision: number, trigger: 'approve' | 'publish' | 'schedule', extra: { supersedes?: string; publishAt?: string; publishedAt?: string } = {}): EntryEvent => ({
    type: 'entry.revision-published',
    data: { ...scope, revisionId, revision, publishedAt: extra.publishedAt ?? NOW.toISOString(), trigger, ...(extra.supersedes ? { supersedes: extra.supersedes } : {}), ...(extra.publishAt ? { publishAt: extra.publishAt } : {}) },
  }),
  rejected: (revisionId: string, revision: number, from: 'pending_review' | 'scheduled', reason?: string): EntryEvent => ({
    type: 'entry.revision-rejected',
    data: { ...scope, revisionId, revision, from, ...(reason ? { reason } : {}) },
  }),
  withdrawn: (revisionId: string, revision: number, from: 'pending_review' | 'scheduled'): EntryEvent => ({ type: 'entry.revision-withdrawn', data: { ...scope, revisionId, revision, from } }),
  reopened: (revisionId: string, revision: number): EntryEvent => ({ type: 'entry.revision-reopened', data: { ...scope, revisionId, revision } }),
  slugChanged: (from: string, to: string): EntryEvent => ({ type: 'entry.slug-changed', data: { ...scope, from, to } }),
  deleted: (slug = 'hello-world', previousSlugs: string[] = []): EntryEvent => ({ type: 'entry.deleted', data: { ...scope, slug, previousSlugs } }),
};
