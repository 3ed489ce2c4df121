import { useQuery } from '@tanstack/react-query';
import { useProject } from '../shell/project-context.tsx';
import { useAsset } from '../fields/asset-fields.tsx';
import { AssetThumb } from '../fields/media-picker.tsx';
import { isRichTextDocument } from '../fields/localized.ts';
import { RichTextView } from './rich-text-view.tsx';
import type { FieldDefinition } from '../api/shapes.ts';

/** One stored value shown as a reader sees it: images as images, references by title, rich text rendered. */
export function FieldValue({ field, value }: { field: FieldDefinition | undefined; value: unknown }) {
  if (value === undefined || value === null) return null;
  if (isRichTextDocument(value)) return <RichTextView doc={value} />;
  switch (field?.type) {
    case 'image':
    case 'file':
      return typeof value === 'string' ? <AssetValue assetId={value} /> : null;
    case 'image_gallery':
      return (
        <ol className="value-gallery">
          {(value as Array<string | { assetId: string; caption?: string }>).map((item, i) => {
            const assetId = typeof item === 'string' ? item : item.assetId;
            return (
              <li key={`${assetId}-${i}`}>
                <AssetValue assetId={assetId} />
                {typeof item === 'object' && item.caption ? <span className="small">{item.caption}</span> : null}
              </li>
            );
          })}
        </ol>
      );
    case 'entry_ref':
      return typeof value === 'string' ? <EntryValue entryId={value} /> : null;
    case 'date':
      return typeof value === 'object' ? <span className="value">{`${(value as { from: string }).from} – ${(value as { to: string }).to}`}</span> : <span className="value">{String(value)}</span>;
    case 'multiselect':
      return <span className="value">{(value as string[]).join(', ')}</span>;
    default:
      return <span className="value">{typeof value === 'string' ? value : JSON.stringify(value)}</span>;
  }
}

function AssetValue({ assetId }: { assetId: string }) {
  const asset = useAsset(assetId);
  if (!asset.data) return <span className="value muted">{assetId}</span>;
  return (
    <span className="asset-value">
      <span className="asset-preview small">
        <AssetThumb asset={asset.data} />
      </span>
      <span className="file-name">{asset.data.fileName}</span>
    </span>
  );
}

function EntryValue({ entryId }: { entryId: string }) {
  const { api, projectId } = useProject();
  const entry = useQuery({ queryKey: [projectId, 'entry', entryId], queryFn: () => api.GET('/entries/{entryId}', { params: { path: { entryId } } }), retry: false });
  return <span className="value">{entry.data ? `${entry.data.title} (/${entry.data.slug})` : entryId}</span>;
}
