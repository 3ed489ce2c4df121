import { NodeViewWrapper, type NodeViewProps } from '@tiptap/react';
import { embedPlayerUrl, sanitiseRichText, type RichTextNode, type UnsupportedAttrs } from '@annals/rich-text';
import { sanitiseHtmlValue } from '@annals/rich-text/rich-text-html-parse.ts';
import { useI18n } from '../../i18n/i18n.tsx';
import { useAsset } from '../asset-fields.tsx';

/** An image of the media library in the editor, with its alt text under it. */
export function ImageView({ node, selected }: NodeViewProps) {
  const { t } = useI18n();
  const assetId = String(node.attrs['assetId'] ?? '');
  const alt = typeof node.attrs['alt'] === 'string' ? node.attrs['alt'] : '';
  const asset = useAsset(assetId || undefined);
  return (
    <NodeViewWrapper as="figure" className={`rt-image${selected ? ' selected' : ''}`} data-asset-id={assetId}>
      {asset.data ? <img src={asset.data.url} alt={alt} /> : <span className="muted">{asset.isError ? t('rt.imageMissing', { id: assetId }) : t('app.loading')}</span>}
      <figcaption className="small">{alt ? t('rt.imageAlt', { alt }) : t('rt.imageNoAlt')}</figcaption>
    </NodeViewWrapper>
  );
}

/** A video embed in the editor: a card naming the video (the player loads on the site, not while editing). */
export function EmbedView({ node, selected }: NodeViewProps) {
  const { t } = useI18n();
  const src = String(node.attrs['src'] ?? '');
  const player = embedPlayerUrl(src);
  const provider = player?.includes('vimeo') ? 'Vimeo' : 'YouTube';
  return (
    <NodeViewWrapper as="figure" className={`rt-embed${selected ? ' selected' : ''}`} aria-label={t('rt.embedTitle', { url: src })} data-embed-src={player}>
      <span className="rt-embed-provider" aria-hidden="true">
        ▶
      </span>
      <span>
        <strong>{t('rt.embedCard', { provider })}</strong>
        <br />
        <span className="small">{src}</span>
      </span>
    </NodeViewWrapper>
  );
}

/**
 * Content stored before the rich-text model that the editor cannot show: an explicit, read-only block holding
 * the original untouched (it is saved back exactly as it was). Its text shows; it can be removed, or turned
 * into what the model holds of it (sanitiseRichText: its text without unknown marks, ...).
 */
export function UnsupportedView({ node, editor, getPos, deleteNode }: NodeViewProps) {
  const { t } = useI18n();
  const { original, whole } = node.attrs as UnsupportedAttrs;
  const html = typeof original === 'string' ? original : null;
  const type = !html && original && typeof original === 'object' ? String((original as { type?: unknown }).type ?? '') : '';
  const keepSupported = () => {
    const pos = typeof getPos === 'function' ? getPos() : undefined;
    if (pos === undefined) return;
    const range = { from: pos, to: pos + node.nodeSize };
    if (whole && html !== null) {
      // An HTML value: what the model holds of it, as the public API serves it.
      editor.chain().focus().insertContentAt(range, sanitiseHtmlValue(html)).run();
      return;
    }
    const kept = sanitiseRichText({ type: 'doc', content: [original] })?.content ?? [];
    if (kept.length === 0) editor.chain().focus().deleteRange(range).run();
    else editor.chain().focus().insertContentAt(range, kept).run();
  };
  return (
    <NodeViewWrapper className="rt-unsupported" role="group" aria-label={t('rt.unsupported')} contentEditable={false}>
      <p className="rt-unsupported-title">
        <strong>{t('rt.unsupported')}</strong>
        {type ? <span className="badge">{type}</span> : null}
        {html !== null ? <span className="badge">HTML</span> : null}
      </p>
      <p className="small">{t('rt.unsupportedBody')}</p>
      {html !== null ? <pre className="rt-unsupported-source">{html}</pre> : <p className="rt-unsupported-text">{textOf(original) || JSON.stringify(original).slice(0, 300)}</p>}
      {editor.isEditable && (
        <div className="row">
          <button type="button" onClick={keepSupported}>
            {t('rt.keepSupported')}
          </button>
          <button type="button" onClick={() => deleteNode()}>
            {t('rt.removeBlock')}
          </button>
        </div>
      )}
    </NodeViewWrapper>
  );
}

/** The text a stored node holds, as a reader would read it (block by block). */
function textOf(node: unknown, depth = 0): string {
  if (depth > 40 || node === null || typeof node !== 'object') return '';
  const n = node as RichTextNode;
  const own = typeof n.text === 'string' ? n.text : '';
  const children = Array.isArray(n.content) ? n.content.map((child) => textOf(child, depth + 1)).filter(Boolean) : [];
  return [own, ...children].filter(Boolean).join(own ? '' : ' ');
}
