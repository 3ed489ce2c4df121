import { useState } from 'react';
import { useHref, useNavigate } from 'react-router';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { Modal } from '../components/modal.tsx';
import { FormDialog, RejectDialog } from '../components/form-dialog.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { ScheduleFields, useSchedule } from '../components/schedule-fields.tsx';
import type { EntrySummary, Revision } from '../api/shapes.ts';

type Dialog = 'schedule' | 'reject' | 'rename' | 'delete' | 'preview' | null;

/**
 * The workflow of the entry's latest revision (spec section 3) and the entry's own actions. Controls the
 * user's role may not use in the entry's form set are not shown (writing, withdrawing, reopening, previews and
 * renaming need content.write; submitting content.submit; approving, scheduling and rejecting content.approve;
 * deleting content.delete); the API refuses them anyway.
 */
export function WorkflowBar({ entry, revision, dirty, saveFirst, onChanged }: { entry: EntrySummary; revision: Revision; dirty: boolean; saveFirst: () => Promise<boolean>; onChanged: () => Promise<void> }) {
  const { t, formatTime } = useI18n();
  const { api, can, path } = useProject();
  const may = {
    write: can('content.write', entry.formSetId),
    submit: can('content.submit', entry.formSetId),
    approve: can('content.approve', entry.formSetId),
    delete: can('content.delete', entry.formSetId),
  };
  const navigate = useNavigate();
  const [dialog, setDialog] = useState<Dialog>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [slug, setSlug] = useState(entry.slug);
  const [preview, setPreview] = useState<{ previewUrl: string; expiresAt: string } | null>(null);
  const schedule = useSchedule();
  // The readable draft page (the site has no preview of its own): a new tab of the console, signed in by its cookie.
  const previewPage = useHref(path(`entries/${entry.id}/preview/${revision.revisionId}`));
  const status = revision.status;

  /** Runs an action; on success the open dialog closes, or `next` opens. */
  const run = async (work: () => Promise<void>, next: Dialog = null) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      setDialog(next);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const act = (action: 'submit' | 'approve' | 'reject' | 'withdraw' | 'reopen', body: Record<string, unknown> = {}) =>
    run(async () => {
      if (dirty && !(await saveFirst())) return;
      const latest = await api.GET('/entries/{entryId}', { params: { path: { entryId: entry.id } } });
      const target = latest.latestRevision!;
      await api.POST(`/revisions/{revisionId}/${action}`, { params: { path: { revisionId: target.revisionId } }, body: { revision: target.revision, ...body } });
      await onChanged();
    });

  const rename = () =>
    void run(async () => {
      await api.PATCH('/entries/{entryId}/slug', { params: { path: { entryId: entry.id } }, body: { slug } });
      await onChanged();
    });

  return (
    <div className="workflow">
      {status === 'rejected' && revision.rejectedReason && <p className="notice">{t('editor.rejectedReason', { reason: revision.rejectedReason })}</p>}
      {status === 'scheduled' && revision.publishAt && (
        <p className="notice">{t('editor.scheduledFor', { time: `${formatTime(revision.publishAt)} (${Intl.DateTimeFormat().resolvedOptions().timeZone})` })}</p>
      )}
      <div className="row" role="toolbar" aria-label={t('list.col.status')}>
        {status === 'draft' && may.submit && (
          <button type="button" className="primary" disabled={busy} onClick={() => void act('submit')}>
            {t('action.submit')}
          </button>
        )}
        {status === 'pending_review' && may.approve && (
          <>
            <button type="button" className="primary" disabled={busy} onClick={() => void act('approve')}>
              {t('action.approve')}
            </button>
            <button type="button" disabled={busy} onClick={() => setDialog('schedule')}>
              {t('action.schedule')}
            </button>
          </>
        )}
        {(status === 'pending_review' || status === 'scheduled') && may.approve && (
          <button type="button" disabled={busy} onClick={() => setDialog('reject')}>
            {t('action.reject')}
          </button>
        )}
        {(status === 'pending_review' || status === 'scheduled') && may.write && (
          <button type="button" disabled={busy} onClick={() => void act('withdraw')}>
            {t('action.withdraw')}
          </button>
        )}
        {status === 'rejected' && may.write && (
          <button type="button" className="primary" disabled={busy} onClick={() => void act('reopen')}>
            {t('action.reopen')}
          </button>
        )}
        {may.write && (
          <>
            <button
              type="button"
              disabled={busy}
              onClick={() =>
                void run(async () => {
                  const token = (await api.POST('/revisions/{revisionId}/preview-token', { params: { path: { revisionId: revision.revisionId } } })) as { previewUrl: string; expiresAt: string };
                  setPreview(token);
                }, 'preview')
              }
            >
              {t('editor.preview')}
            </button>
            <button
              type="button"
              disabled={busy}
              onClick={() =>
                void run(async () => {
                  const copy = (await api.POST('/entries/{entryId}/duplicate', { params: { path: { entryId: entry.id } }, body: {} })) as { entry: { id: string } };
                  navigate(path(`entries/${copy.entry.id}`));
                })
              }
            >
              {t('editor.duplicate')}
            </button>
            <button type="button" disabled={busy} onClick={() => setDialog('rename')}>
              {t('editor.rename')}
            </button>
          </>
        )}
        {may.delete && (
          <button type="button" className="danger" disabled={busy} onClick={() => setDialog('delete')}>
            {t('editor.delete')}
          </button>
        )}
      </div>
      {!dialog && <ErrorMessage error={error} />}

      <FormDialog open={dialog === 'schedule'} title={t('action.schedule')} onClose={() => setDialog(null)} onSubmit={() => void act('approve', { publishAt: schedule.publishAt() })} submitLabel={t('action.confirm')} disabled={busy || !schedule.local} error={error}>
        <ScheduleFields schedule={schedule} />
      </FormDialog>

      <RejectDialog open={dialog === 'reject'} onClose={() => setDialog(null)} onReject={(body) => void act('reject', body)} busy={busy} error={error} />

      <FormDialog open={dialog === 'rename'} title={t('editor.rename')} onClose={() => setDialog(null)} onSubmit={rename} submitLabel={t('action.confirm')} disabled={busy || slug === entry.slug} error={error}>
        <label>
          {t('new.slug')}
          <input type="text" value={slug} pattern="[a-z0-9]+(-[a-z0-9]+)*" required onChange={(e) => setSlug(e.target.value)} aria-describedby="rename-help" />
        </label>
        <p id="rename-help" className="help">
          {t('editor.rename.help', { oldSlug: entry.slug })}
        </p>
      </FormDialog>

      <FormDialog
        open={dialog === 'delete'}
        title={t('editor.delete')}
        onClose={() => setDialog(null)}
        onSubmit={() =>
          void run(async () => {
            await api.DELETE('/entries/{entryId}', { params: { path: { entryId: entry.id } } });
            navigate(path(`content/${entry.formSetId}`));
          })
        }
        submitLabel={t('editor.delete')}
        danger
        disabled={busy}
        error={error}
      >
        <p>{t('editor.delete.confirm', { title: entry.title || entry.slug })}</p>
      </FormDialog>

      <Modal open={dialog === 'preview'} title={t('editor.preview')} onClose={() => setDialog(null)}>
        {preview && (
          <>
            <p>
              <a className="button primary" href={previewPage} target="_blank" rel="noopener">
                {t('preview.open')}: {t('editor.revision', { revision: revision.revision })}
              </a>
            </p>
            <p className="small">
              <a href={preview.previewUrl} target="_blank" rel="noopener noreferrer">
                {t('preview.json', { time: formatTime(preview.expiresAt) })}
              </a>
            </p>
          </>
        )}
        <div className="dialog-actions">
          <button type="button" onClick={() => setDialog(null)}>
            {t('picker.close')}
          </button>
        </div>
      </Modal>
    </div>
  );
}
