import { useState } from 'react';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ApiError } from '../api/admin-client.ts';
import { FormDialog } from '../components/form-dialog.tsx';
import { isUnreachable, sentence } from '../components/error-message.tsx';
import { ScheduleFields, useSchedule } from '../components/schedule-fields.tsx';
import type { EntrySummary } from '../api/shapes.ts';

export type BulkAction = 'submit' | 'approve' | 'schedule' | 'delete';

/** What an action needs of an entry's latest revision; delete takes any entry. */
const APPLIES_TO: Record<BulkAction, string | null> = { submit: 'draft', approve: 'pending_review', schedule: 'pending_review', delete: null };

export interface BulkOutcome {
  entry: EntrySummary;
  result: 'done' | 'skipped' | 'failed';
  message?: string;
}

/** Which bulk actions the user's role may take in a form set; `any`: whether the list offers a selection at all. */
export function useBulkActions(formSetId: string) {
  const { can } = useProject();
  const may = { submit: can('content.submit', formSetId), approve: can('content.approve', formSetId), delete: can('content.delete', formSetId) };
  return { ...may, any: may.submit || may.approve || may.delete };
}

/** The service's reason for not doing it, as a sentence with its hint; or that it could not be reached. */
function reason(error: unknown, unreachable: string): string {
  if (isUnreachable(error)) return unreachable;
  return sentence(error instanceof Error ? error.message : String(error), error instanceof ApiError ? error.hint : undefined);
}

/**
 * The actions on the entries selected in a list: submit for review, approve, approve for a later time (one
 * publish time for all, spec 3 rule 2: POST /revisions/bulk-schedule) and delete. Each entry is acted on as
 * its own request, with the revision the list showed (an entry changed meanwhile is refused, not overwritten);
 * entries whose state the action does not apply to are skipped and named, as is every refusal, with the
 * service's reason (four eyes, a role, a policy). Each action is offered when the user's role may do it in the
 * list's form set (submitting: content.submit; approving and scheduling: content.approve; deleting:
 * content.delete); the API refuses the others anyway.
 */
export function BulkActions({ formSetId, selected, onDone, onClear }: { formSetId: string; selected: EntrySummary[]; onDone: () => Promise<void>; onClear: () => void }) {
  const { t } = useI18n();
  const { api } = useProject();
  const may = useBulkActions(formSetId);
  const schedule = useSchedule();
  const [dialog, setDialog] = useState<'schedule' | 'delete' | null>(null);
  const [running, setRunning] = useState<{ action: BulkAction; done: number } | null>(null);
  const [report, setReport] = useState<{ action: BulkAction; outcomes: BulkOutcome[] } | null>(null);

  const label = (action: BulkAction) => t(action === 'delete' ? 'bulk.deleteAction' : `action.${action}`);

  const run = async (action: BulkAction) => {
    const wanted = APPLIES_TO[action];
    const outcomes: BulkOutcome[] = [];
    const applicable: EntrySummary[] = [];
    for (const entry of selected) {
      if (wanted === null || entry.latestRevision?.status === wanted) applicable.push(entry);
      else outcomes.push({ entry, result: 'skipped', message: entry.latestRevision ? t(`status.${entry.latestRevision.status}`) : '' });
    }
    setReport(null);
    setRunning({ action, done: 0 });
    try {
      if (action === 'schedule' && applicable.length > 0) {
        const publishAt = schedule.publishAt();
        try {
          const answer = (await api.POST('/revisions/bulk-schedule', { body: { revisionIds: applicable.map((e) => e.latestRevision!.revisionId), publishAt } })) as { results: Array<{ ok: boolean; error?: { message: string; hint?: string } }> };
          applicable.forEach((entry, i) => {
            const result = answer.results[i];
            outcomes.push(result?.ok ? { entry, result: 'done' } : { entry, result: 'failed', message: result?.error ? sentence(result.error.message, result.error.hint) : '' });
          });
        } catch (error) {
          // None was scheduled: the same reason for each.
          for (const entry of applicable) outcomes.push({ entry, result: 'failed', message: reason(error, t('app.unreachable')) });
        }
      } else {
        let done = 0;
        for (const entry of applicable) {
          try {
            if (action === 'delete') await api.DELETE('/entries/{entryId}', { params: { path: { entryId: entry.id } } });
            else await api.POST(`/revisions/{revisionId}/${action === 'submit' ? 'submit' : 'approve'}`, { params: { path: { revisionId: entry.latestRevision!.revisionId } }, body: { revision: entry.latestRevision!.revision } });
            outcomes.push({ entry, result: 'done' });
          } catch (error) {
            outcomes.push({ entry, result: 'failed', message: reason(error, t('app.unreachable')) });
          }
          setRunning({ action, done: ++done });
        }
      }
    } finally {
      setRunning(null);
      setDialog(null);
    }
    // In the order of the list.
    const order = new Map(selected.map((entry, i) => [entry.id, i]));
    outcomes.sort((a, b) => order.get(a.entry.id)! - order.get(b.entry.id)!);
    setReport({ action, outcomes });
    onClear();
    await onDone();
  };

  const busy = running !== null;
  const count = (result: BulkOutcome['result']) => report?.outcomes.filter((o) => o.result === result).length ?? 0;
  const title = (entry: EntrySummary) => entry.title || entry.slug;

  return (
    <>
      {selected.length > 0 && (
        <div className="bulk-bar row" role="toolbar" aria-label={t('bulk.actions', { count: selected.length })}>
          <strong>{t('bulk.selected', { count: selected.length })}</strong>
          {may.submit && (
            <button type="button" disabled={busy} onClick={() => void run('submit')}>
              {t('action.submit')}
            </button>
          )}
          {may.approve && (
            <>
              <button type="button" disabled={busy} onClick={() => void run('approve')}>
                {t('action.approve')}
              </button>
              <button type="button" disabled={busy} onClick={() => setDialog('schedule')}>
                {t('action.schedule')}
              </button>
            </>
          )}
          {may.delete && (
            <button type="button" className="danger" disabled={busy} onClick={() => setDialog('delete')}>
              {t('bulk.delete')}
            </button>
          )}
          <button type="button" disabled={busy} onClick={onClear}>
            {t('bulk.clear')}
          </button>
        </div>
      )}
      <div role="status" aria-live="polite">
        {running && <p>{t('bulk.running', { action: label(running.action), done: running.done, count: selected.length })}</p>}
        {report && (
          <div className="bulk-report notice">
            <p>{t('bulk.result', { action: label(report.action), done: count('done'), skipped: count('skipped'), failed: count('failed') })}</p>
            {report.outcomes.some((o) => o.result !== 'done') && (
              <ul>
                {report.outcomes
                  .filter((o) => o.result !== 'done')
                  .map((o) => (
                    <li key={o.entry.id}>{o.result === 'skipped' ? t('bulk.skipped', { title: title(o.entry), status: o.message ?? '' }) : t('bulk.failed', { title: title(o.entry), message: o.message ?? '' })}</li>
                  ))}
              </ul>
            )}
            <button type="button" onClick={() => setReport(null)}>
              {t('bulk.dismiss')}
            </button>
          </div>
        )}
      </div>

      <FormDialog open={dialog === 'schedule'} title={t('bulk.scheduleTitle', { count: selected.length })} onClose={() => setDialog(null)} onSubmit={() => void run('schedule')} submitLabel={t('action.confirm')} disabled={busy || !schedule.local} error={null}>
        <ScheduleFields schedule={schedule} />
        <p className="help">{t('bulk.scheduleHelp')}</p>
      </FormDialog>

      <FormDialog open={dialog === 'delete'} title={t('bulk.deleteTitle', { count: selected.length })} onClose={() => setDialog(null)} onSubmit={() => void run('delete')} submitLabel={t('bulk.delete')} danger disabled={busy} error={null}>
        <p>{t('bulk.deleteConfirm', { count: selected.length })}</p>
        <ul>
          {selected.map((entry) => (
            <li key={entry.id}>{title(entry)}</li>
          ))}
        </ul>
      </FormDialog>
    </>
  );
}
