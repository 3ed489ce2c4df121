import { useState, type DragEvent, type FormEvent, type MouseEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
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

/** The library's folders that hold assets, with their counts. */
function useMediaFolders() {
  const { api, projectId } = useProject();
  return useQuery({ queryKey: [projectId, 'media', 'folders'], queryFn: () => api.GET('/media/folders') });
}

/**
 * The media library: grid, search, type and folder filters (paged by the server), upload with progress into the
 * folder shown, details (alt text, caption, folder, an image's focal point), delete.
 */
export function MediaLibrary() {
  const { t } = useI18n();
  const { projectId, can } = useProject();
  const { clientOptions } = useSession();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [type, setType] = useState('');
  // undefined: every folder; '': the library's top.
  const [folder, setFolder] = useState<string | undefined>(undefined);
  const pages = useMediaPages(name, type, folder);
  const folders = useMediaFolders();
  const [uploads, setUploads] = useState<Array<{ name: string; fraction: number }>>([]);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState<Asset | null>(null);
  const [dragging, setDragging] = useState(false);

  const upload = async (files: File[]) => {
    setError(null);
    for (const file of files) {
      setUploads((u) => [...u, { name: file.name, fraction: 0 }]);
      try {
        await uploadMedia(clientOptions(projectId), file, (fraction) => setUploads((u) => u.map((x) => (x.name === file.name ? { ...x, fraction } : x))), folder ?? '');
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
      {/* Uploading is writing (content.write): a role that only reads sees the library without the drop zone. */}
      {can('content.write') && (
        // biome-ignore lint/a11y/noStaticElementInteractions: dropping files is a shortcut; the file input inside does the same from the keyboard.
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
      )}
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
        <label>
          {t('media.folder')}
          <select value={folder === undefined ? '*' : `/${folder}`} onChange={(e) => setFolder(e.target.value === '*' ? undefined : e.target.value.slice(1))}>
            <option value="*">{t('media.folder.all')}</option>
            <option value="/">{t('media.folder.top')}</option>
            {folders.data?.items.map((f) => (
              <option key={f.folder} value={`/${f.folder}`}>
                {t('media.folder.count', { folder: f.folder, count: f.assets })}
              </option>
            ))}
          </select>
        </label>
      </div>
      <MediaGrid pages={pages} actionLabel={t('media.details')} onAction={setEditing} />
      {editing && <AssetDetails asset={editing} folders={folders.data?.items.map((f) => f.folder) ?? []} onClose={() => setEditing(null)} />}
    </section>
  );
}

function AssetDetails({ asset, folders, onClose }: { asset: Asset; folders: string[]; onClose: () => void }) {
  const { t } = useI18n();
  const { api, projectId, can } = useProject();
  const queryClient = useQueryClient();
  const [altText, setAltText] = useState(asset.altText);
  const [caption, setCaption] = useState(asset.caption);
  const [folder, setFolder] = useState(asset.folder);
  const [focalPoint, setFocalPoint] = useState(asset.focalPoint);
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
      await api.PATCH('/media/{assetId}', { params: { path: { assetId: asset.id } }, body: { altText, caption, folder, ...(asset.kind === 'image' ? { focalPoint } : {}) } });
      await done();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <Modal open title={asset.fileName} onClose={onClose}>
      {asset.kind === 'image' && asset.width ? (
        <FocalPointPicker asset={asset} point={focalPoint} onChange={setFocalPoint} />
      ) : (
        <div className="asset-preview">
          <AssetThumb asset={asset} />
        </div>
      )}
      <form onSubmit={save}>
        <label>
          {t('media.altText')}
          <input type="text" value={altText} onChange={(e) => setAltText(e.target.value)} />
        </label>
        <label>
          {t('media.caption')}
          <textarea value={caption} rows={3} onChange={(e) => setCaption(e.target.value)} />
        </label>
        <label>
          {t('media.folder')}
          <input type="text" list="media-folders" value={folder} maxLength={255} aria-describedby="media-folder-help" onChange={(e) => setFolder(e.target.value)} />
        </label>
        <datalist id="media-folders">
          {folders.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
        <p id="media-folder-help" className="help">
          {t('media.folder.help')}
        </p>
        <ErrorMessage error={error} />
        {confirmDelete && <p role="alert">{t('media.delete.confirm', { name: asset.fileName })}</p>}
        <div className="dialog-actions">
          {can('media.manage') && (
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
          {can('content.write') && (
            <button type="submit" className="primary">
              {t('media.saveDetails')}
            </button>
          )}
        </div>
      </form>
    </Modal>
  );
}

/**
 * An image's focal point: a click on the image puts it there, the two fields give it in percent (from the
 * keyboard too), and two crops show what a site keeps in view with it (CSS object-position, as a site uses it).
 */
function FocalPointPicker({ asset, point, onChange }: { asset: Asset; point: Asset['focalPoint']; onChange: (point: Asset['focalPoint']) => void }) {
  const { t } = useI18n();
  const percent = (value: number) => Math.round(value * 1000) / 10;
  const place = (event: MouseEvent<HTMLImageElement>) => {
    const box = event.currentTarget.getBoundingClientRect();
    const clamp = (value: number) => Math.min(1, Math.max(0, value));
    onChange({ x: clamp((event.clientX - box.left) / box.width), y: clamp((event.clientY - box.top) / box.height) });
  };
  const typed = (axis: 'x' | 'y', text: string) => {
    const value = Number(text);
    if (text === '' || !Number.isFinite(value)) return;
    onChange({ ...(point ?? { x: 0.5, y: 0.5 }), [axis]: Math.min(100, Math.max(0, value)) / 100 });
  };
  const position = point ? `${percent(point.x)}% ${percent(point.y)}%` : '50% 50%';
  return (
    <fieldset className="focal-point">
      <legend>{t('media.focal')}</legend>
      <p className="help">{t('media.focal.help')}</p>
      {/* As wide as the dialog allows, at most 16rem tall: the image's box is the picture, so a click maps to it. */}
      <div className="focal-point-image" style={{ width: `min(100%, 24rem, ${((16 * (asset.width ?? 1)) / (asset.height ?? 1)).toFixed(2)}rem)` }}>
        {/* biome-ignore lint/a11y/useKeyWithClickEvents: the X and Y fields below set the point from the keyboard. */}
        <img src={asset.url} alt={asset.altText || asset.fileName} onClick={place} />
        {point && <span className="focal-point-marker" style={{ left: `${percent(point.x)}%`, top: `${percent(point.y)}%` }} aria-hidden="true" />}
      </div>
      <div className="filters">
        <label>
          {t('media.focal.x')}
          <input type="number" min={0} max={100} step={0.1} value={point ? percent(point.x) : ''} onChange={(e) => typed('x', e.target.value)} />
        </label>
        <label>
          {t('media.focal.y')}
          <input type="number" min={0} max={100} step={0.1} value={point ? percent(point.y) : ''} onChange={(e) => typed('y', e.target.value)} />
        </label>
        <button type="button" disabled={!point} onClick={() => onChange(null)}>
          {t('media.focal.clear')}
        </button>
      </div>
      {!point && <p className="muted small">{t('media.focal.none')}</p>}
      <p className="muted small">{t('media.focal.crops')}</p>
      <div className="focal-point-crops" aria-hidden="true">
        <img src={asset.url} alt="" className="crop-square" style={{ objectPosition: position }} />
        <img src={asset.url} alt="" className="crop-wide" style={{ objectPosition: position }} />
      </div>
    </fieldset>
  );
}
