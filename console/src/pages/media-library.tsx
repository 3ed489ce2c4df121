import { useState, type DragEvent, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { uploadMedia } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { useSession } from '../session/session.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Modal } from '../components/modal.tsx';
import { AssetThumb, MediaGrid, useMediaPages } from '../fields/media-picker.tsx';
import type { MessageKey } from '../i18n/en.ts';
import type { Asset } from '../api/shapes.ts';

const TYPES = ['', 'image', 'video', 'audio', 'document'] as const;

/** The media library: grid, search and type filter (paged by the server), upload with progress, details, delete. */
export function MediaLibrary() {
  const { t } = useI18n();
  const { projectId } = useProject();
  const { clientOptions } = useSession();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [type, setType] = useState('');
  const pages = useMediaPages(name, type);
  const [uploads, setUploads] = useState<Array<{ name: string; fraction: number }>>([]);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState<Asset | null>(null);
  const [dragging, setDragging] = useState(false);

  const upload = async (files: File[]) => {
    setError(null);
    for (const file of files) {
      setUploads((u) => [...u, { name: file.name, fraction: 0 }]);
      try {
        await uploadMedia(clientOptions(projectId), file, (fraction) => setUploads((u) => u.map((x) => (x.name === file.name ? { ...x, fraction } : x))));
      } catch (e) {
        setError(e);
      } finally {
        setUploads((u) => u.filter((x) => x.name !== file.name));
      }
    }
    await queryClient.invalidateQueries({ queryKey: [projectId, 'media'] });
  };
  const drop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    void upload([...event.dataTransfer.files]);
  };
  return (
    <section>
      <h1>{t('media.title')}</h1>
      <div
        className={`drop-zone${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={drop}
      >
        <label>
          {t('media.drop')}
          <input
            type="file"
            multiple
            onChange={(e) => {
              const files = [...(e.target.files ?? [])];
              e.target.value = '';
              void upload(files);
            }}
          />
        </label>
        {uploads.map((u) => (
          <div key={u.name} className="upload-progress">
            <span>{t('media.uploading', { name: u.name, percent: Math.round(u.fraction * 100) })}</span>
            <progress max={1} value={u.fraction} aria-label={u.name} />
          </div>
        ))}
      </div>
      <ErrorMessage error={error ?? pages.error} />
      <div className="filters">
        <label>
          {t('media.search')}
          <input type="search" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          {t('media.type')}
          <select value={type} onChange={(e) => setType(e.target.value)}>
            {TYPES.map((kind) => (
              <option key={kind} value={kind}>
                {t(`media.type.${kind || 'any'}` as MessageKey)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <MediaGrid pages={pages} actionLabel={t('media.details')} onAction={setEditing} />
      {editing && <AssetDetails asset={editing} onClose={() => setEditing(null)} />}
    </section>
  );
}

function AssetDetails({ asset, onClose }: { asset: Asset; onClose: () => void }) {
  const { t } = useI18n();
  const { api, projectId, isAdmin } = useProject();
  const queryClient = useQueryClient();
  const [altText, setAltText] = useState(asset.altText);
  const [caption, setCaption] = useState(asset.caption);
  const [error, setError] = useState<unknown>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const done = async () => {
    await queryClient.invalidateQueries({ queryKey: [projectId, 'media'] });
    await queryClient.invalidateQueries({ queryKey: [projectId, 'asset', asset.id] });
    onClose();
  };
  const save = async (event: FormEvent) => {
    event.preventDefault();
    try {
      await api.PATCH('/media/{assetId}', { params: { path: { assetId: asset.id } }, body: { altText, caption } });
      await done();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <Modal open title={asset.fileName} onClose={onClose}>
      <div className="asset-preview">
        <AssetThumb asset={asset} />
      </div>
      <form onSubmit={save}>
        <label>
          {t('media.altText')}
          <input type="text" value={altText} onChange={(e) => setAltText(e.target.value)} />
        </label>
        <label>
          {t('media.caption')}
          <textarea value={caption} rows={3} onChange={(e) => setCaption(e.target.value)} />
        </label>
        <ErrorMessage error={error} />
        {confirmDelete && <p role="alert">{t('media.delete.confirm', { name: asset.fileName })}</p>}
        <div className="dialog-actions">
          {isAdmin && (
            <button
              type="button"
              className="danger"
              onClick={async () => {
                if (!confirmDelete) return setConfirmDelete(true);
                try {
                  await api.DELETE('/media/{assetId}', { params: { path: { assetId: asset.id } } });
                  await done();
                } catch (e) {
                  setError(e);
                }
              }}
            >
              {confirmDelete ? t('action.confirm') : t('media.delete')}
            </button>
          )}
          <button type="button" onClick={onClose}>
            {t('action.cancel')}
          </button>
          <button type="submit" className="primary">
            {t('media.saveDetails')}
          </button>
        </div>
      </form>
    </Modal>
  );
}
