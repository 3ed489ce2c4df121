import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { DiffView } from '../components/diff-view.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { RejectDialog } from '../components/form-dialog.tsx';
import { isLocalized, isRichTextDocument } from '../fields/localized.ts';
import type { FieldChange, FieldDefinition } from '../api/shapes.ts';

/** A first submission against nothing: each value (each locale's, for a localized field) as added. */
function everyValueAdded(fields: FieldDefinition[], snapshot: Record<string, unknown>): FieldChange[] {
  return fields.flatMap((field): FieldChange[] => {
    const value = snapshot[field.key];
    if (value === undefined) return [];
    if (isLocalized(field) && value && typeof value === 'object' && !isRichTextDocument(value)) {
      return Object.entries(value as Record<string, unknown>).map(([locale, after]) => ({ field: field.key, locale, kind: 'added', after }));
    }
    return [{ field: field.key, kind: 'added', after: value }];
  });
}

/**
 * One submission side by side with the live revision (before the first publication, against nothing: every
 * value as added), field by field; approve or reject from here.
 */
export function ReviewCompare() {
  const { revisionId = '' } = useParams();
  const { t } = useI18n();
  const { api, projectId, can, path } = useProject();
  const navigate = useNavigate();
  const revision = useQuery({ queryKey: [projectId, 'revision', revisionId], queryFn: () => api.GET('/revisions/{revisionId}', { params: { path: { revisionId } } }) });
  const entryId = revision.data?.entryId;
  const entry = useQuery({ queryKey: [projectId, 'entry', entryId], queryFn: () => api.GET('/entries/{entryId}', { params: { path: { entryId: entryId! } } }), enabled: Boolean(entryId) });
  const formSet = useQuery({ queryKey: [projectId, 'form-set', entry.data?.formSetId], queryFn: () => api.GET('/form-sets/{formSetId}', { params: { path: { formSetId: entry.data!.formSetId } } }), enabled: Boolean(entry.data) });
  const liveId = entry.data?.liveRevision?.revisionId;
  const live = useQuery({ queryKey: [projectId, 'revision', liveId], queryFn: () => api.GET('/revisions/{revisionId}', { params: { path: { revisionId: liveId! } } }), enabled: Boolean(liveId) });
  const diff = useQuery({
    queryKey: [projectId, 'diff', liveId, revisionId],
    queryFn: () => api.GET('/entries/{entryId}/diff', { params: { path: { entryId: entryId! }, query: { from: liveId!, to: revisionId } } }),
    enabled: Boolean(entryId && liveId && liveId !== revisionId),
  });
  const [rejecting, setRejecting] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const act = async (action: 'approve' | 'reject', body: Record<string, unknown> = {}) => {
    setError(null);
    try {
      await api.POST(`/revisions/{revisionId}/${action}`, { params: { path: { revisionId } }, body: { revision: revision.data!.revision, ...body } });
      navigate(path('review'));
    } catch (e) {
      setError(e);
    }
  };
  const loadError = revision.error ?? entry.error ?? formSet.error ?? diff.error;
  if (loadError) return <ErrorMessage error={loadError} />;
  if (!revision.data || !entry.data || !formSet.data) return <p>{t('app.loading')}</p>;
  const submitted = revision.data;
  const fields = formSet.data.definition.fields;
  return (
    <section>
      <h1>{t('review.compareTitle', { title: entry.data.title || entry.data.slug })}</h1>
      <p className="row">
        <StatusBadge status={submitted.status} />
        <Link to={path(`entries/${entry.data.id}`)}>{t('editor.revision', { revision: submitted.revision })}</Link>
        <Link to={path(`entries/${entry.data.id}/history`)}>{t('editor.history')}</Link>
      </p>
      {liveId && diff.data && live.data ? (
        <DiffView
          diff={diff.data}
          fields={fields}
          beforeTitle={t('review.live', { revision: live.data.revision })}
          afterTitle={t('review.submitted', { revision: submitted.revision })}
          before={live.data.snapshot ?? {}}
          after={submitted.snapshot ?? {}}
        />
      ) : (
        <>
          <p className="muted">{t('review.noLive')}</p>
          <DiffView
            diff={{ entryId: entry.data.id, from: submitted, to: submitted, changes: everyValueAdded(fields, submitted.snapshot ?? {}) }}
            fields={fields}
            beforeTitle={t('review.noLive')}
            afterTitle={t('review.submitted', { revision: submitted.revision })}
          />
        </>
      )}
      {can('content.approve', entry.data.formSetId) && (submitted.status === 'pending_review' || submitted.status === 'scheduled') && (
        <div className="row">
          {submitted.status === 'pending_review' && (
            <button type="button" className="primary" onClick={() => void act('approve')}>
              {t('action.approve')}
            </button>
          )}
          <button type="button" onClick={() => setRejecting(true)}>
            {t('action.reject')}
          </button>
        </div>
      )}
      <ErrorMessage error={error} />
      <RejectDialog open={rejecting} onClose={() => setRejecting(false)} onReject={(body) => void act('reject', body)} error={error} />
    </section>
  );
}
