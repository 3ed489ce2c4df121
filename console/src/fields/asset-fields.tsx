import { useRef, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { uploadMedia } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { useSession } from '../session/session.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { AssetThumb, MediaPicker } from './media-picker.tsx';
import type { Asset } from '../api/shapes.ts';

export function useAsset(assetId: string | undefined) {
  const { api, projectId } = useProject();
  return useQuery({ queryKey: [projectId, 'asset', assetId], queryFn: () => api.GET('/media/{assetId}', { params: { path: { assetId: assetId! } } }), enabled: Boolean(assetId) });
}

/** Upload a file chosen in the browser, with progress; resolves with the new asset. */
function useUpload() {
  const { clientOptions } = useSession();
  const { projectId } = useProject();
  const queryClient = useQueryClient();
  const [progress, setProgress] = useState<{ name: string; fraction: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const upload = async (file: File): Promise<Asset | undefined> => {
    setError(null);
    setProgress({ name: file.name, fraction: 0 });
    try {
      const asset = await uploadMedia(clientOptions(projectId), file, (fraction) => setProgress({ name: file.name, fraction }));
      void queryClient.invalidateQueries({ queryKey: [projectId, 'media'] });
      return asset;
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setProgress(null);
    }
  };
  return { upload, progress, error };
}

function UploadButton({ id, accept, onUploaded }: { id: string; accept?: string; onUploaded: (asset: Asset) => void }) {
  const { t } = useI18n();
  const input = useRef<HTMLInputElement>(null);
  const { upload, progress, error } = useUpload();
  return (
    <>
      <input
        ref={input}
        id={`${id}-upload`}
        className="visually-hidden"
        tabIndex={-1}
        aria-label={t('field.upload')}
        type="file"
        accept={accept}
        onChange={async (e) => {
          const file = e.target.files?.[0];
          e.target.value = '';
          if (file) {
            const asset = await upload(file);
            if (asset) onUploaded(asset);
          }
        }}
      />
      <button type="button" onClick={() => input.current?.click()}>
        {t('field.upload')}
      </button>
      {progress && (
        <progress max={1} value={progress.fraction} aria-label={t('media.uploading', { name: progress.name, percent: Math.round(progress.fraction * 100) })} />
      )}
      <ErrorMessage error={error} />
    </>
  );
}

/** image and file fields: an asset id, uploaded here or picked from the library. */
export function AssetField({ id, kind, value, onChange }: { id: string; kind: 'image' | 'file'; value: unknown; onChange: (next: unknown) => void }) {
  const { t } = useI18n();
  const assetId = typeof value === 'string' ? value : undefined;
  const asset = useAsset(assetId);
  const [picking, setPicking] = useState(false);
  return (
    <div className="asset-field">
      <div className="asset-preview">{asset.data ? <AssetThumb asset={asset.data} /> : <span className="muted">{assetId ?? t('field.noAsset')}</span>}</div>
      {asset.data && <span className="file-name">{asset.data.fileName}</span>}
      <div className="row">
        <UploadButton id={id} {...(kind === 'image' ? { accept: 'image/*' } : {})} onUploaded={(a) => onChange(a.id)} />
        <button type="button" onClick={() => setPicking(true)}>
          {t('field.choose')}
        </button>
        {assetId && (
          <button type="button" onClick={() => onChange(undefined)}>
            {t('field.remove')}
          </button>
        )}
      </div>
      <MediaPicker
        open={picking}
        {...(kind === 'image' ? { kind } : {})}
        onClose={() => setPicking(false)}
        onPick={(picked) => {
          onChange(picked.id);
          setPicking(false);
        }}
      />
    </div>
  );
}

interface GalleryItem {
  assetId: string;
  caption?: string;
}

function galleryItems(value: unknown): GalleryItem[] {
  if (!Array.isArray(value)) return [];
  return value.map((item) => (typeof item === 'string' ? { assetId: item } : (item as GalleryItem)));
}

function GalleryThumb({ assetId }: { assetId: string }) {
  const asset = useAsset(assetId);
  return <div className="asset-preview small">{asset.data ? <AssetThumb asset={asset.data} /> : null}</div>;
}

/** image_gallery: ordered images with captions. */
export function GalleryField({ id, value, onChange }: { id: string; value: unknown; onChange: (next: unknown) => void }) {
  const { t } = useI18n();
  const items = galleryItems(value);
  const [picking, setPicking] = useState(false);
  const set = (next: GalleryItem[]) => onChange(next.length ? next.map((i) => (i.caption ? { assetId: i.assetId, caption: i.caption } : { assetId: i.assetId })) : undefined);
  const move = (from: number, to: number) => {
    const next = [...items];
    const [item] = next.splice(from, 1);
    next.splice(to, 0, item!);
    set(next);
  };
  return (
    <div className="gallery-field">
      <ol className="gallery">
        {items.map((item, index) => (
          <li key={`${item.assetId}-${index}`}>
            <GalleryThumb assetId={item.assetId} />
            <label>
              {t('field.caption')} {index + 1}
              <input type="text" value={item.caption ?? ''} onChange={(e) => set(items.map((it, i) => (i === index ? { ...it, caption: e.target.value } : it)))} />
            </label>
            <div className="row">
              <button type="button" disabled={index === 0} onClick={() => move(index, index - 1)} aria-label={`${t('field.moveUp')} ${index + 1}`}>
                ↑
              </button>
              <button type="button" disabled={index === items.length - 1} onClick={() => move(index, index + 1)} aria-label={`${t('field.moveDown')} ${index + 1}`}>
                ↓
              </button>
              <button type="button" onClick={() => set(items.filter((_, i) => i !== index))} aria-label={`${t('field.remove')} ${index + 1}`}>
                ✕
              </button>
            </div>
          </li>
        ))}
      </ol>
      <div className="row">
        <UploadButton id={id} accept="image/*" onUploaded={(a) => set([...items, { assetId: a.id }])} />
        <button type="button" onClick={() => setPicking(true)}>
          {t('field.choose')}
        </button>
      </div>
      <MediaPicker
        open={picking}
        kind="image"
        onClose={() => setPicking(false)}
        onPick={(picked) => {
          set([...items, { assetId: picked.id }]);
          setPicking(false);
        }}
      />
    </div>
  );
}
