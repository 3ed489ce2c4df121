/**
 * An admin help article: a Markdown file of docs/help/ with one `# Title`, an introduction and `## `
 * sections. Search and answers work on sections, so each section should stand on its own. Pure.
 */
export interface HelpSection {
  /** The heading as an anchor: `publishing-a-revision` (the introduction is `overview`). */
  id: string;
  heading: string;
  /** The section's Markdown, without its heading line. */
  markdown: string;
  /** The same as plain text: formatting marks removed, for excerpts and indexing. */
  text: string;
}

export interface HelpArticle {
  /** The file name without .md: `getting-started`. */
  id: string;
  title: string;
  /** The introduction's first paragraph, as plain text. */
  summary: string;
  sections: HelpSection[];
  /** The whole file. */
  markdown: string;
}

/** Article ids: lowercase words joined by single hyphens. */
export const HELP_ARTICLE_ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export class HelpArticleError extends Error {
  override name = 'HelpArticleError';
}

/** Parses one article; throws HelpArticleError naming the article when it has no `# Title` or an id is malformed. */
export function parseHelpArticle(id: string, markdown: string): HelpArticle {
  if (!HELP_ARTICLE_ID.test(id)) throw new HelpArticleError(`help article id ${JSON.stringify(id)} must be lowercase words joined by hyphens`);
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  let title: string | undefined;
  const sections: Array<{ heading: string; lines: string[] }> = [];
  let current: { heading: string; lines: string[] } | undefined;
  let fence: string | null = null;
  for (const line of lines) {
    const fenceMatch = /^\s*(```|~~~)/.exec(line);
    if (fenceMatch) fence = fence === null ? fenceMatch[1]! : fence === fenceMatch[1] ? null : fence;
    const inFence = fence !== null || fenceMatch !== null;
    const h1 = inFence ? null : /^#\s+(.+?)\s*#*\s*$/.exec(line);
    const h2 = inFence ? null : /^##\s+(.+?)\s*#*\s*$/.exec(line);
    if (h1 && title === undefined) {
      title = h1[1]!;
      current = { heading: title, lines: [] };
      sections.push(current);
    } else if (h2 && title !== undefined) {
      current = { heading: h2[1]!, lines: [] };
      sections.push(current);
    } else if (current) {
      current.lines.push(line);
    }
  }
  if (title === undefined) throw new HelpArticleError(`help article ${id} has no "# Title" line`);
  const used = new Set<string>();
  const parsed: HelpSection[] = [];
  sections.forEach((section, index) => {
    const body = section.lines.join('\n').trim();
    if (index === 0 && body === '') return;
    let anchor = index === 0 ? 'overview' : anchorOf(section.heading);
    for (let n = 2; used.has(anchor); n++) anchor = `${index === 0 ? 'overview' : anchorOf(section.heading)}-${n}`;
    used.add(anchor);
    parsed.push({ id: anchor, heading: section.heading, markdown: body, text: markdownToText(body) });
  });
  const intro = sections[0]!.lines.join('\n').trim();
  const firstParagraph = intro.split(/\n\s*\n/)[0] ?? '';
  return { id, title, summary: markdownToText(firstParagraph), sections: parsed, markdown };
}

/** A heading as GitHub would anchor it: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  const anchor = markdownToText(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s+/g, '-');
  return anchor === '' ? 'section' : anchor;
}

/** Plain text of Markdown: code fences kept as text, emphasis, links, images and table pipes reduced. */
export function markdownToText(markdown: string): string {
  return markdown
    .replace(/^\s*(```|~~~)[^\n]*$/gm, '')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|[\s(])[*_]([^*_\n]+)[*_]/g, '$1$2')
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/^\s{0,3}>\s?/gm, '')
    .replace(/^\s*[-*+]\s+/gm, '- ')
    .replace(/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/gm, '')
    .replace(/^[ \t]*\|[ \t]*|[ \t]*\|[ \t]*$/gm, '')
    .replace(/[ \t]*\|[ \t]*/g, ' | ')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
