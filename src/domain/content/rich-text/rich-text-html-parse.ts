import { parseDocument } from 'htmlparser2';
import { Element, Text, type AnyNode, type ChildNode } from 'domhandler';
import render from 'dom-serializer';
import { checkHtmlTree, htmlElementVerdict, type HtmlTreeAdapter } from './rich-text-html.ts';

/**
 * HTML values read with htmlparser2 (a parser in plain JavaScript, no DOM): the service and the console parse
 * an HTML value the same way, and never in a live document (a browser reports a page's CSP refusing the event
 * handler attributes of hostile HTML even when it only parses it). Not exported by index.ts, so what does not
 * read HTML does not bundle the parser: import it as `@annals/rich-text/rich-text-html-parse.ts`.
 */
export function parseHtmlValue(html: string) {
  return parseDocument(html, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
}

export const htmlparserAdapter: HtmlTreeAdapter<AnyNode> = {
  children: (node) => ('children' in node ? node.children : []),
  element: (node) => (node instanceof Element ? { name: node.name.toLowerCase(), attrs: node.attribs } : null),
};

/** Every problem of an HTML value against the model's HTML form, each with where it is (`p[2] > a[0]`). */
export function checkHtmlValue(html: string, maxProblems?: number): Array<{ path: string; problem: string }> {
  return checkHtmlTree(parseHtmlValue(html), htmlparserAdapter, maxProblems);
}

/**
 * HTML holding only the model's elements and attributes: an element outside it is left out with its content
 * (scripts, styles, frames other than embeds, form controls, ...) or without it (a <div> or <span> around
 * text keeps the text); a link with an unsafe target keeps its text; attributes outside the model go. Text is
 * re-encoded by dom-serializer.
 */
export function sanitiseHtmlValue(html: string): string {
  const clean = (nodes: readonly ChildNode[], parent: string | undefined): ChildNode[] => {
    const out: ChildNode[] = [];
    for (const node of nodes) {
      if (node instanceof Text) out.push(new Text(node.data));
      if (!(node instanceof Element)) continue;
      const name = node.name.toLowerCase();
      const verdict = htmlElementVerdict(name, node.attribs, parent);
      if (verdict.action === 'drop') continue;
      if (verdict.action === 'keep') out.push(new Element(name, verdict.attrs, clean(node.children, name)));
      else out.push(...clean(node.children, parent));
    }
    return out;
  };
  return render(clean(parseHtmlValue(html).children, undefined), { encodeEntities: 'utf8', selfClosingTags: false });
}
