import { useState } from 'react';
import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { Modal } from '../components/modal.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { useDebouncedValue } from '../components/use-debounced-value.ts';
import type { Asset } from '../api/shapes.ts';

/**
 * Media of the project, newest first, a page at a time from the server; filtered by name and type. The name
 * is typed into a search box: it is sent once the typing pauses. The type is chosen at once.
 */
/** `folder`: undefined for every folder, '' for the library's top. */
export function useMediaPages(typedName: string, type: string, folder?: string) {
  const { api, projectId } = useProject();
  const name = useDebouncedValue(typedName);
  return useInfiniteQuery({
    queryKey: [projectId, 'media', name, type, folder ?? null],
    initialPageParam: '',
    queryFn: ({ pageParam }) => api.GET('/media', { params: { query: { limit: 24, name: name || undefined, type: type || undefined, folder, cursor: pageParam || undefined } } }),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    // The grid keeps showing the last answer while a new search loads.
    placeholderData: keepPreviousData,
  });
}

export function AssetThumb({ asset }: { asset: Asset }) {
  return asset.kind === 'image' ? <img src={asset.url} alt={asset.altText || asset.fileName} loading="lazy" /> : <span className="file-icon">{asset.fileName.split('.').pop()?.toUpperCase()}</span>;
}

/** A grid of assets, a page at a time, each with one action button ("Select", "Details"). */
export function MediaGrid({ pages, actionLabel, onAction }: { pages: ReturnType<typeof useMediaPages>; actionLabel: string; onAction: (asset: Asset) => void }) {
  const { t } = useI18n();
  const assets = pages.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <>
      {pages.data && assets.length === 0 && <p>{t('media.empty')}</p>}
      <ul className="media-grid">
        {assets.map((asset) => (
          <li key={asset.id}>
            <AssetThumb asset={asset} />
            <span className="file-name">{asset.fileName}</span>
            <button type="button" onClick={() => onAction(asset)} aria-label={`${actionLabel}: ${asset.fileName}`}>
              {actionLabel}
            </button>
          </li>
        ))}
      </ul>
      {pages.hasNextPage && (
        <button type="button" onClick={() => void pages.fetchNextPage()}>
          {t('media.more')}
        </button>
      )}
    </>
  );
}

/** Choose an asset from the library. */
export function MediaPicker({ open, kind, onClose, onPick }: { open: boolean; kind?: 'image'; onClose: () => void; onPick: (asset: Asset) => void }) {
  const { t } = useI18n();
  const [name, setName] = useState('');
  const pages = useMediaPages(name, kind ?? '');
  return (
    <Modal open={open} title={t('picker.media')} onClose={onClose} wide>
      <label>
        {t('media.search')}
        <input type="search" value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <ErrorMessage error={pages.error} />
      <MediaGrid pages={pages} actionLabel={t('picker.select')} onAction={onPick} />
      <div className="dialog-actions">
        <button type="button" onClick={onClose}>
          {t('picker.close')}
        </button>
      </div>
    </Modal>
  );
}
