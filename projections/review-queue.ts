import type { RecordedEvent } from '../src/event-store/event-store.ts';
import { entryEvents, type EntryEvent } from '../src/domain/content/entry/entry-events.ts';
import { entryTitle, LISTING_LOCALE_EVENTS, listingLocaleOf, type ListingLocale } from '../src/domain/content/entry/entry-listing.ts';
import type { InReviewStatus } from '../src/domain/content/entry/entry-workflow.ts';
import type { FormSetDefinition } from '../src/domain/content/form-set/form-set-definition.ts';
import { formSetEvents, type FormSetEvent } from '../src/domain/content/form-set/form-set-events.ts';
import { defineProjection, type ProjectionView } from '../src/projection-engine/projection.ts';
import { reviewNoticeEvents, reviewNoticeJobId, unreachableMailNotice, type ReviewNoticeChannel, type ReviewNoticeEvent, type ReviewNoticeKind } from '../src/domain/review-notice/review-notice-events.ts';
import type { ApprovalPolicy, SealedChatWebhook } from '../src/domain/access/project-decider.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';

/**
 * The review desk's queue: every revision waiting for a reviewer (pending_review) or for its publish time
 * (scheduled), across a project's form sets. Fed by the workflow events, so listing it is an index walk,
 * never a scan of entries or revisions.
 *
 * Collections:
 * - `items`, id entryId (only an entry's latest revision can be in review, so an entry has at most one
 *   item): the revision, its entry's title and slug, the form set, who submitted it and when, the
 *   assignee, the status and the publish time (scheduled only). Submitting adds the item; approving with a
 *   date makes it scheduled; publishing (by a reviewer or the scheduled job), rejecting, withdrawing and
 *   deleting the entry remove it.
 * - `entries`, id entryId: what an item shows of its entry, kept from the entry's own events: slug,
 *   assignee, and the title of its latest revision (with the form set and default locale as they were at
 *   the save).
 * - `form_sets`, id formSetId: name and what the title is read from; `projects`, id projectId: the
 *   default locale.
 * - `notices`, id `{eventId}.{channel}`: the outbox of review notices (src/review-notices/review-notice-outbox.ts),
 *   one per workflow event and channel (mail, unless it can reach nobody: unreachableMailNotice; chat when
 *   the project had a review chat webhook at that point of the log), with what the notice tells as it was at
 *   the event (title, form set, revision, who acted, the author, the reason). Pending until its completion is folded, which removes it: the completion event
 *   (review-notice.completed, on the stream outbox-review-notices-{jobId}) records how it ended, so a rebuild
 *   arrives at the same pending notices and sends nothing again. Only workflow events after
 *   review-notices.started are notified. A change of the project's approval policy asks for a `policy-changed`
 *   notice (PolicyNoticeDoc: the policy before and after, who changed it) on both channels, from
 *   review-notices.policy-changes-started on (the policy change carries its previous value, so nothing else is
 *   kept for it).
 * - `notice_projects`, id projectId: the project's review chat webhook (sealed), or null.
 * - `notice_state`, id `started` / `policy-changes-started`: whether each start of notices has been folded.
 */


export interface ReviewItemDoc {
  entryId: string;
  projectId: string;
  formSetId: string;
  formSetName: string | null;
  entrySlug: string;
  title: string;
  revisionId: string;
  revision: number;
  status: InReviewStatus;
  submittedBy: { type: string; id: string };
  submittedAt: string;
  assignee: string | null;
  /** Set while scheduled. */
  publishAt: string | null;
  /** Who saved the revision (absent on items folded before review notices). */
  author?: { type: string; id: string };
}

export interface ReviewEntryDoc {
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  assignee: string | null;
  title: string;
  latestRevisionId: string | null;
  /** Who saved the latest revision. */
  latestRevisionBy?: { type: string; id: string };
}

/** What a notice tells of the revision in review, as the review item had it at the event. */
type NoticedItem = Pick<ReviewItemDoc, 'entryId' | 'projectId' | 'formSetId' | 'formSetName' | 'entrySlug' | 'title' | 'revisionId' | 'revision'>;

/** What every notice has: the outbox item, the event told about, who did it, when. */
interface NoticeBase {
  jobId: string;
  /** The event told about. */
  eventId: string;
  channel: ReviewNoticeChannel;
  projectId: string;
  /** Who did what the notice tells (submitted, approved, rejected, published: the scheduled job is a system actor; changed the policy). */
  actor: { type: string; id: string };
  occurredAt: string;
  /** Always pending: a notice leaves the outbox when its completion is folded (the worker takes pending items). */
  status: 'pending';
  /** Hand-overs recorded so far (review-notice.attempt-started). */
  attempts: number;
}

/** A change of the project's approval policy, told to every tenant_admin. */
export interface PolicyNoticeDoc extends NoticeBase {
  kind: 'policy-changed';
  policy: ApprovalPolicy;
  /** The policy before the change. */
  previous: ApprovalPolicy;
}

export type ReviewNoticeDoc = WorkflowNoticeDoc | PolicyNoticeDoc;

/** A workflow event about a revision in review. */
export interface WorkflowNoticeDoc extends NoticedItem, NoticeBase {
  kind: Exclude<ReviewNoticeKind, 'policy-changed'>;
  /** Who saved the revision; the submitter when an agent key saved it. */
  author: { type: string; id: string };
  submittedBy: { type: string; id: string };
  reason: string | null;
  publishAt: string | null;
}

interface FormSetInfo {
  formSetId: string;
  name: string;
  definition: Pick<FormSetDefinition, 'fields' | 'seoRoles' | 'widgetRoles'>;
}


const FORM_SET_TYPES = new Set<string>(formSetEvents.map((d) => d.type));
const NOTICE_TYPES: string[] = [...reviewNoticeEvents.map((d) => d.type), 'project.review-notice-chat-changed', 'project.approval-policy-changed'];

export const reviewQueue = defineProjection({
  name: 'review-queue',
  // Version 3: a notice leaves the outbox when its completion is folded (version 2 kept it, finished).
  // Version 4: no e-mail notice is queued that can reach nobody (unreachableMailNotice).
  version: 4,
  description: 'Revisions waiting for review or for their publish time, across form sets (the review desk), and the outbox of review notices.',
  collections: {
    items: {
      indexes: [
        { name: 'by_project_submitted', fields: [['projectId', 1], ['submittedAt', 1]] },
        { name: 'by_project_assignee_submitted', fields: [['projectId', 1], ['assignee', 1], ['submittedAt', 1]] },
        { name: 'by_project_form_set_submitted', fields: [['projectId', 1], ['formSetId', 1], ['submittedAt', 1]] },
        { name: 'by_project_status_submitted', fields: [['projectId', 1], ['status', 1], ['submittedAt', 1]] },
        // Read while folding: a renamed form set renames its items.
        { name: 'by_form_set', fields: [['formSetId', 1]], whileFolding: true },
      ],
    },
    entries: {},
    form_sets: {},
    projects: {},
    notices: { indexes: [{ name: 'by_status', fields: [['status', 1], ['occurredAt', 1]] }] },
    notice_projects: {},
    notice_state: {},
  },
  filter: { eventTypes: [...LISTING_LOCALE_EVENTS, ...FORM_SET_TYPES, ...entryEvents.map((d) => d.type), ...NOTICE_TYPES] },

  async apply(recorded, view) {
    if (NOTICE_TYPES.includes(recorded.type)) return applyNoticeEvent(recorded, view);
    if (LISTING_LOCALE_EVENTS.includes(recorded.type)) {
      const locale = listingLocaleOf(recorded);
      view.put('projects', locale.projectId, { ...locale });
      return;
    }
    if (FORM_SET_TYPES.has(recorded.type)) return applyFormSet({ type: recorded.type, data: recorded.data } as FormSetEvent, view);
    return applyEntry({ type: recorded.type, data: recorded.data } as EntryEvent, recorded, view);
  },
});

async function applyFormSet(event: FormSetEvent, view: ProjectionView): Promise<void> {
  if (event.type === 'form-set.deleted') {
    view.delete('form_sets', event.data.formSetId);
    return;
  }
  const { definition } = event.data;
  view.put('form_sets', definition.id, { formSetId: definition.id, name: definition.name, definition: { fields: definition.fields, seoRoles: definition.seoRoles, widgetRoles: definition.widgetRoles } } satisfies FormSetInfo);
  if (event.type === 'form-set.updated') {
    // Its name shows on every item of the form set.
    for (const item of await view.find<Doc<ReviewItemDoc>>('items', { formSetId: definition.id })) view.put('items', item.entryId, { ...item, formSetName: definition.name });
  }
}

async function applyEntry(event: EntryEvent, recorded: RecordedEvent, view: ProjectionView): Promise<void> {
  const at = recorded.metadata.occurredAt;
  const { entryId } = event.data;
  const patchItem = async (patch: Partial<ReviewItemDoc>, revisionId?: string) => {
    const item = await view.get<Doc<ReviewItemDoc>>('items', entryId);
    if (item && (revisionId === undefined || item.revisionId === revisionId)) view.put('items', entryId, { ...item, ...patch });
  };
  const patchEntry = async (patch: Partial<ReviewEntryDoc>) => {
    const entry = await view.get<Doc<ReviewEntryDoc>>('entries', entryId);
    if (entry) view.put('entries', entryId, { ...entry, ...patch });
  };
  switch (event.type) {
    case 'entry.created': {
      const d = event.data;
      view.put('entries', entryId, { entryId, projectId: d.projectId, formSetId: d.formSetId, slug: d.slug, assignee: null, title: '', latestRevisionId: null } satisfies ReviewEntryDoc);
      return;
    }
    case 'entry.revision-saved': {
      const d = event.data;
      const formSet = await view.get<Doc<FormSetInfo>>('form_sets', d.formSetId);
      const project = await view.get<Doc<ListingLocale>>('projects', d.projectId);
      await patchEntry({
        title: entryTitle(formSet?.definition ?? null, d.snapshot, project?.defaultLocale ?? null),
        latestRevisionId: d.revisionId,
        latestRevisionBy: actorOf(recorded),
      });
      return;
    }
    case 'entry.revision-submitted': {
      const d = event.data;
      const entry = await view.get<Doc<ReviewEntryDoc>>('entries', entryId);
      if (!entry) return;
      const formSet = await view.get<Doc<FormSetInfo>>('form_sets', d.formSetId);
      const item: ReviewItemDoc = {
        entryId,
        projectId: d.projectId,
        formSetId: d.formSetId,
        formSetName: formSet?.name ?? null,
        entrySlug: entry.slug,
        title: entry.title,
        revisionId: d.revisionId,
        revision: d.revision,
        status: 'pending_review',
        submittedBy: actorOf(recorded),
        submittedAt: at,
        assignee: entry.assignee,
        publishAt: null,
        author: entry.latestRevisionId === d.revisionId && entry.latestRevisionBy?.type === 'user' ? entry.latestRevisionBy : actorOf(recorded),
      };
      view.put('items', entryId, { ...item });
      await addNotices(view, recorded, item, 'submitted', {});
      return;
    }
    case 'entry.revision-approved': {
      const item = await view.get<Doc<ReviewItemDoc>>('items', entryId);
      if (item?.revisionId !== event.data.revisionId) return;
      view.put('items', entryId, { ...item, status: 'scheduled', publishAt: event.data.publishAt });
      await addNotices(view, recorded, item, 'scheduled', { publishAt: event.data.publishAt });
      return;
    }
    case 'entry.revision-published':
    case 'entry.revision-rejected':
    case 'entry.revision-withdrawn': {
      const item = await view.get<Doc<ReviewItemDoc>>('items', entryId);
      if (item?.revisionId !== event.data.revisionId) return;
      view.delete('items', entryId);
      if (event.type === 'entry.revision-rejected') await addNotices(view, recorded, item, 'rejected', { reason: event.data.reason ?? null });
      if (event.type === 'entry.revision-published') await addNotices(view, recorded, item, event.data.trigger === 'approve' ? 'approved' : 'published', {});
      return;
    }
    case 'entry.assigned':
      await patchEntry({ assignee: event.data.userId });
      await patchItem({ assignee: event.data.userId });
      return;
    case 'entry.slug-changed':
      await patchEntry({ slug: event.data.to });
      await patchItem({ entrySlug: event.data.to });
      return;
    case 'entry.deleted':
      view.delete('items', entryId);
      view.delete('entries', entryId);
      return;
    default:
      return;
  }
}

function actorOf(recorded: RecordedEvent): { type: string; id: string } {
  return { type: recorded.metadata.actor.type, id: recorded.metadata.actor.id };
}

/** The notices a workflow event asks for: an e-mail, and a chat post when the project has a review chat webhook. */
async function addNotices(
  view: ProjectionView,
  recorded: RecordedEvent,
  item: ReviewItemDoc,
  kind: WorkflowNoticeDoc['kind'],
  extra: { reason?: string | null; publishAt?: string },
): Promise<void> {
  if (!(await view.get('notice_state', 'started'))) return;
  const chat = await view.get<Doc<{ chat: SealedChatWebhook | null }>>('notice_projects', item.projectId);
  const actor = actorOf(recorded);
  const author = item.author ?? item.submittedBy;
  const channels: ReviewNoticeChannel[] = [];
  if (unreachableMailNotice(kind, actor, author) === null) channels.push('mail');
  if (chat?.chat) channels.push('chat');
  for (const channel of channels) {
    const jobId = reviewNoticeJobId(recorded.id, channel);
    const notice: WorkflowNoticeDoc = {
      jobId,
      eventId: recorded.id,
      channel,
      kind,
      projectId: item.projectId,
      entryId: item.entryId,
      formSetId: item.formSetId,
      formSetName: item.formSetName,
      entrySlug: item.entrySlug,
      title: item.title,
      revisionId: item.revisionId,
      revision: item.revision,
      actor,
      author,
      submittedBy: item.submittedBy,
      reason: extra.reason ?? null,
      publishAt: extra.publishAt ?? item.publishAt,
      occurredAt: recorded.metadata.occurredAt,
      status: 'pending',
      attempts: 0,
    };
    view.put('notices', jobId, { ...notice });
  }
}

async function applyNoticeEvent(recorded: RecordedEvent, view: ProjectionView): Promise<void> {
  if (recorded.type === 'project.review-notice-chat-changed') {
    const d = recorded.data as { projectId: string; chatWebhook: SealedChatWebhook | null };
    view.put('notice_projects', d.projectId, { projectId: d.projectId, chat: d.chatWebhook });
    return;
  }
  if (recorded.type === 'project.approval-policy-changed') return addPolicyNotices(recorded, view);
  const event = { type: recorded.type, data: recorded.data } as ReviewNoticeEvent;
  switch (event.type) {
    case 'review-notices.started':
      view.put('notice_state', 'started', { id: 'started', at: recorded.metadata.occurredAt });
      return;
    case 'review-notices.policy-changes-started':
      view.put('notice_state', 'policy-changes-started', { id: 'policy-changes-started', at: recorded.metadata.occurredAt });
      return;
    case 'review-notice.attempt-started': {
      const notice = await view.get<Doc<ReviewNoticeDoc>>('notices', event.data.jobId);
      if (notice) view.put('notices', notice.jobId, { ...notice, attempts: Math.max(notice.attempts, event.data.attempt) });
      return;
    }
    case 'review-notice.completed': {
      const d = event.data;
      const notice = await view.get<Doc<ReviewNoticeDoc>>('notices', d.jobId);
      // Done: the outbox holds work to do; how the notice ended is the completion event in the log.
      if (notice) view.delete('notices', notice.jobId);
      return;
    }
  }
}

/** A policy change: a notice to the tenant's admins by e-mail, and to the review chat when the project has one. */
async function addPolicyNotices(recorded: RecordedEvent, view: ProjectionView): Promise<void> {
  if (!(await view.get('notice_state', 'policy-changes-started'))) return;
  const d = recorded.data as { projectId: string; humanApproval: boolean; fourEyes: boolean; previous?: ApprovalPolicy };
  const chat = await view.get<Doc<{ chat: SealedChatWebhook | null }>>('notice_projects', d.projectId);
  const channels: ReviewNoticeChannel[] = chat?.chat ? ['mail', 'chat'] : ['mail'];
  for (const channel of channels) {
    const jobId = reviewNoticeJobId(recorded.id, channel);
    const notice: PolicyNoticeDoc = {
      jobId,
      eventId: recorded.id,
      channel,
      kind: 'policy-changed',
      projectId: d.projectId,
      actor: actorOf(recorded),
      occurredAt: recorded.metadata.occurredAt,
      policy: { humanApproval: d.humanApproval, fourEyes: d.fourEyes },
      // Changes recorded before `previous` was are before the start of these notices; the default is a safe reading.
      previous: d.previous ?? { humanApproval: false, fourEyes: false },
      status: 'pending',
      attempts: 0,
    };
    view.put('notices', jobId, { ...notice });
  }
}
