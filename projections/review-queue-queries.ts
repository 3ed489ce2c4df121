/**
 * What the rest of the service may ask of the review queue (./review-queue.ts), typed: no collection names or
 * casts outside the read-model layer. Every read goes through the ReadModelReader it is given, so reads follow
 * the active generation and its cache as any other.
 */
import type { ReadModelReader } from '../src/read-models/read-model-reader.ts';
import type { SealedChatWebhook } from '../src/domain/access/project-decider.ts';
import { reviewQueue } from './review-queue.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';


/** A document of `notice_projects`: the project's review chat webhook (sealed), or null. */
export interface NoticeProjectDoc {
  projectId: string;
  chat: SealedChatWebhook | null;
}

/** The collections paged by keyset (keysetPage in src/application/keyset-page.ts) or worked through by an outbox. */
export const REVIEW_QUEUE_LISTS = {
  items: { projection: reviewQueue.name, collection: 'items' },
  /** The outbox of review notices (src/review-notices/review-notice-outbox.ts). */
  notices: { projection: reviewQueue.name, collection: 'notices' },
} as const;

export function reviewQueueQueries(reader: ReadModelReader) {
  return {
    /** Where the project's review notices go by chat; none when the project never set a chat webhook. */
    noticeProject: (projectId: string) => reader.get<Doc<NoticeProjectDoc>>(reviewQueue.name, 'notice_projects', projectId),
  };
}

export type ReviewQueueQueries = ReturnType<typeof reviewQueueQueries>;
