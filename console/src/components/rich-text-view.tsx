import type { ReactNode } from 'react';

interface Node {
  type: string;
  text?: string;
  attrs?: Record<string, unknown>;
  marks?: Array<{ type: string; attrs?: Record<string, unknown> }>;
  content?: Node[];
}

/**
 * A rich-text document rendered as React elements (never as injected HTML): content is hostile input.
 * Unknown node types show their text.
 */
export function RichTextView({ doc }: { doc: unknown }) {
  if (typeof doc === 'string') return <div className="rich-text-view">{doc}</div>;
  return <div className="rich-text-view">{render(doc as Node, 'r')}</div>;
}

function render(node: Node | undefined, key: string): ReactNode {
  if (!node || typeof node !== 'object') return null;
  const children = (node.content ?? []).map((child, i) => render(child, `${key}.${i}`));
  switch (node.type) {
    case 'doc':
      return <>{children}</>;
    case 'paragraph':
      return <p key={key}>{children}</p>;
    case 'heading': {
      const level = Math.min(6, Math.max(3, Number(node.attrs?.['level'] ?? 2) + 1));
      const Tag = `h${level}` as 'h3';
      return <Tag key={key}>{children}</Tag>;
    }
    case 'bulletList':
      return <ul key={key}>{children}</ul>;
    case 'orderedList':
      return <ol key={key}>{children}</ol>;
    case 'listItem':
      return <li key={key}>{children}</li>;
    case 'blockquote':
      return <blockquote key={key}>{children}</blockquote>;
    case 'codeBlock':
      return (
        <pre key={key}>
          <code>{children}</code>
        </pre>
      );
    case 'hardBreak':
      return <br key={key} />;
    case 'horizontalRule':
      return <hr key={key} />;
    case 'text': {
      let out: ReactNode = node.text ?? '';
      for (const mark of node.marks ?? []) {
        if (mark.type === 'bold') out = <strong>{out}</strong>;
        else if (mark.type === 'italic') out = <em>{out}</em>;
        else if (mark.type === 'code') out = <code>{out}</code>;
        else if (mark.type === 'strike') out = <s>{out}</s>;
      }
      return <span key={key}>{out}</span>;
    }
    default:
      return <span key={key}>{children}</span>;
  }
}
