import type { ReactNode } from 'react';
import { embedPlayerUrl, isSafeHref, withUnsupportedBlocks, UNSUPPORTED_NODE, type RichTextNode, type UnsupportedAttrs } from '@annals/rich-text';
import { useI18n } from '../i18n/i18n.tsx';
import { useAsset } from '../fields/asset-fields.tsx';

/**
 * A rich-text value rendered as React elements (never as injected HTML: content is hostile input), for the
 * review desk and the history: every node and mark of the rich-text model; a block stored before the model
 * shows as an explicit unsupported block with its text, never silently dropped. Links are shown only with a
 * safe target; an HTML value shows as its source text.
 */
export function RichTextView({ doc }: { doc: unknown }) {
  if (typeof doc === 'string') return <div className="rich-text-view value">{doc}</div>;
  const { doc: shown } = withUnsupportedBlocks(doc);
  return <div className="rich-text-view">{(shown.content ?? []).map((child, i) => <RichNode key={i} node={child} />)}</div>;
}

function RichNode({ node }: { node: RichTextNode }): ReactNode {
  const children = (node.content ?? []).map((child, i) => <RichNode key={i} node={child} />);
  const attrs = node.attrs ?? {};
  switch (node.type) {
    case 'paragraph':
      return <p>{children}</p>;
    case 'heading': {
      // Below the page's own headings.
      const level = Math.min(6, Math.max(3, Number(attrs['level'] ?? 2) + 1));
      const Tag = `h${level}` as 'h3';
      return <Tag>{children}</Tag>;
    }
    case 'bulletList':
      return <ul>{children}</ul>;
    case 'orderedList':
      return <ol start={typeof attrs['start'] === 'number' ? attrs['start'] : undefined}>{children}</ol>;
    case 'listItem':
      return <li>{children}</li>;
    case 'blockquote':
      return <blockquote>{children}</blockquote>;
    case 'codeBlock':
      return (
        <pre>
          <code>{children}</code>
        </pre>
      );
    case 'hardBreak':
      return <br />;
    case 'horizontalRule':
      return <hr />;
    case 'table':
      return (
        <table className="rt-table">
          <tbody>{children}</tbody>
        </table>
      );
    case 'tableRow':
      return <tr>{children}</tr>;
    case 'tableHeader':
      return <th colSpan={Number(attrs['colspan'] ?? 1)} rowSpan={Number(attrs['rowspan'] ?? 1)}>{children}</th>;
    case 'tableCell':
      return <td colSpan={Number(attrs['colspan'] ?? 1)} rowSpan={Number(attrs['rowspan'] ?? 1)}>{children}</td>;
    case 'image':
      return <RichImage assetId={String(attrs['assetId'] ?? '')} alt={typeof attrs['alt'] === 'string' ? attrs['alt'] : ''} />;
    case 'embed':
      return <RichEmbed src={String(attrs['src'] ?? '')} />;
    case 'text':
      return <RichText node={node} />;
    case UNSUPPORTED_NODE:
      return <Unsupported original={(attrs as unknown as UnsupportedAttrs).original} />;
    default:
      return <>{children}</>;
  }
}

function RichText({ node }: { node: RichTextNode }) {
  let out: ReactNode = node.text ?? '';
  for (const mark of node.marks ?? []) {
    if (mark.type === 'bold') out = <strong>{out}</strong>;
    else if (mark.type === 'italic') out = <em>{out}</em>;
    else if (mark.type === 'underline') out = <u>{out}</u>;
    else if (mark.type === 'strike') out = <s>{out}</s>;
    else if (mark.type === 'code') out = <code>{out}</code>;
    else if (mark.type === 'link') {
      const href = String(mark.attrs?.['href'] ?? '');
      if (isSafeHref(href)) {
        out = (
          <a href={href} target="_blank" rel="noopener noreferrer nofollow">
            {out}
          </a>
        );
      }
    }
  }
  return <>{out}</>;
}

function RichImage({ assetId, alt }: { assetId: string; alt: string }) {
  const asset = useAsset(assetId || undefined);
  return <span className="rt-view-image">{asset.data ? <img src={asset.data.url} alt={alt} /> : <span className="muted">{alt || assetId}</span>}</span>;
}

function RichEmbed({ src }: { src: string }) {
  const { t } = useI18n();
  const player = embedPlayerUrl(src);
  return <p className="rt-view-embed">{t('rt.embedCard', { provider: player?.includes('vimeo') ? 'Vimeo' : 'YouTube' })}: {src}</p>;
}

function Unsupported({ original }: { original: unknown }) {
  const { t } = useI18n();
  return (
    <div className="rt-unsupported" role="group" aria-label={t('rt.unsupported')}>
      <strong>{t('rt.unsupported')}</strong>
      <pre className="rt-unsupported-source">{typeof original === 'string' ? original : JSON.stringify(original, null, 1)}</pre>
    </div>
  );
}
