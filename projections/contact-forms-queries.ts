/**
 * What the rest of the service may ask of the contact-forms read model (./contact-forms.ts), typed: no
 * collection names or casts outside the read-model layer. Every read goes through the ReadModelReader it is
 * given, so reads follow the active generation and its cache as any other.
 */
import type { ReadModelReader } from '../src/read-models/read-model-reader.ts';
import type { ContactFormDoc, SubmissionDoc } from './contact-forms.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';


/** Listed at most by a project's list of contact forms. */
export const CONTACT_FORM_LIST_LIMIT = 1000;

/** The collections paged by keyset (keysetPage in src/application/keyset-page.ts) or worked through by an outbox. */
export const CONTACT_FORM_LISTS = {
  submissions: { projection: 'contact-forms', collection: 'submissions' },
  /** The outbox of notices of submissions (src/contact-forms/notice-outbox.ts). */
  jobs: { projection: 'contact-forms', collection: 'jobs' },
} as const;

export function contactFormQueries(reader: ReadModelReader) {
  return {
    /** A form by id, deleted or not (the caller checks `deleted`). */
    form: (formId: string) => reader.get<Doc<ContactFormDoc>>('contact-forms', 'forms', formId),
    /** The project's forms that are not deleted, by slug. */
    formsOfProject: (projectId: string) => reader.find<Doc<ContactFormDoc>>('contact-forms', 'forms', { filter: { projectId, deleted: false }, sort: [['slug', 'asc']], limit: CONTACT_FORM_LIST_LIMIT }),
    /** The project's form (not deleted) with this slug, or null. */
    async formBySlug(projectId: string, slug: string): Promise<Doc<ContactFormDoc> | null> {
      const [form] = await reader.find<Doc<ContactFormDoc>>('contact-forms', 'forms', { filter: { projectId, slug, deleted: false }, limit: 1 });
      return form ?? null;
    },
    /** A submission by id; an erased one is kept, without its sealed values. */
    submission: (submissionId: string) => reader.get<Doc<SubmissionDoc>>('contact-forms', 'submissions', submissionId),
    countUnreadSubmissions: (projectId: string, formId: string) => reader.count('contact-forms', 'submissions', { formId, projectId, read: false }),
  };
}

export type ContactFormQueries = ReturnType<typeof contactFormQueries>;
