/**
 * Rich-text documents the tests share: one holding every node type and mark of the model, and the shapes
 * stored before the rule that crashed the console (issue 44), as an API client wrote them.
 */

/** A document with every node type, mark and attribute of the model, as the console's editor writes it. */
export function everyNodeDocument(assetId: string) {
  const text = (t: string, marks?: unknown[]) => ({ type: 'text', text: t, ...(marks ? { marks } : {}) });
  const paragraph = (...content: unknown[]) => ({ type: 'paragraph', content });
  const cell = (type: 'tableCell' | 'tableHeader', t: string) => ({ type, attrs: { colspan: 1, rowspan: 1, colwidth: null }, content: [paragraph(text(t))] });
  return {
    type: 'doc',
    content: [
      { type: 'heading', attrs: { level: 2 }, content: [text('Every kind of content')] },
      paragraph(
        text('Bold', [{ type: 'bold' }]),
        text(', '),
        text('italic', [{ type: 'italic' }]),
        text(', '),
        text('struck', [{ type: 'strike' }]),
        text(', '),
        text('underlined', [{ type: 'underline' }]),
        text(', '),
        text('code', [{ type: 'code' }]),
        text(' and '),
        text('a link', [{ type: 'link', attrs: { href: 'https://example.org/festival', target: '_blank', rel: 'noopener noreferrer nofollow', class: null, title: null } }]),
        { type: 'hardBreak' },
        text('after a line break.'),
      ),
      { type: 'heading', attrs: { level: 3 }, content: [text('Lists')] },
      { type: 'bulletList', content: [{ type: 'listItem', content: [paragraph(text('First point'))] }, { type: 'listItem', content: [paragraph(text('Second point'))] }] },
      { type: 'orderedList', attrs: { start: 1, type: null }, content: [{ type: 'listItem', content: [paragraph(text('Step one'))] }, { type: 'listItem', content: [paragraph(text('Step two'))] }] },
      { type: 'blockquote', content: [paragraph(text('A quotation, with '), text('mailto', [{ type: 'link', attrs: { href: 'mailto:press@example.org', target: null, rel: null, class: null, title: null } }]))] },
      { type: 'codeBlock', attrs: { language: 'js' }, content: [text('console.log("hello");')] },
      { type: 'horizontalRule' },
      { type: 'image', attrs: { assetId, alt: 'A blue square', title: null } },
      {
        type: 'table',
        content: [
          { type: 'tableRow', content: [cell('tableHeader', 'Day'), cell('tableHeader', 'Stage')] },
          { type: 'tableRow', content: [cell('tableCell', 'Friday'), cell('tableCell', 'Harbour')] },
        ],
      },
      { type: 'embed', attrs: { src: 'https://www.youtube.com/watch?v=aqz-KE-bpKQ', title: null } },
      paragraph(text('The end.')),
    ],
  };
}

/** The bodies that crashed the console when written through the API (issue 44, defect 1), and what each is. */
export function crashingBodies(assetId: string): Record<string, { body: unknown; fitsModel: boolean }> {
  const paragraph = (...content: unknown[]) => ({ type: 'paragraph', content });
  return {
    // A link as an API client writes it: only href (TipTap adds its other attributes).
    link: { body: { type: 'doc', content: [paragraph({ type: 'text', text: 'Read the ' }, { type: 'text', text: 'programme', marks: [{ type: 'link', attrs: { href: 'https://example.org/programme' } }] })] }, fitsModel: true },
    quoteWithCode: { body: { type: 'doc', content: [{ type: 'blockquote', content: [{ type: 'codeBlock', content: [{ type: 'text', text: 'npm start' }] }] }] }, fitsModel: true },
    image: { body: { type: 'doc', content: [{ type: 'image', attrs: { assetId, alt: 'A red square' } }] }, fitsModel: true },
    table: {
      body: { type: 'doc', content: [{ type: 'table', content: [{ type: 'tableRow', content: [{ type: 'tableCell', content: [paragraph({ type: 'text', text: 'Cell' })] }] }] }] },
      fitsModel: true,
    },
    unknownMark: { body: { type: 'doc', content: [paragraph({ type: 'text', text: 'Highlighted', marks: [{ type: 'highlight', attrs: { color: 'yellow' } }] })] }, fitsModel: false },
  };
}
