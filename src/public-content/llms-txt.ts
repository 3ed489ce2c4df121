/**
 * llms.txt (https://llmstxt.org): an H1 with the site's name, a blockquote summary, then one H2 section per
 * form set listing its published entries as `- [title](url): description`.
 *
 * Every value is content someone typed, and the file is Markdown that sites and agents render: each text is
 * written as text (markdownText) and each URL as a link only when it is an http(s) URL (markdownLinkUrl), so
 * no value can add HTML, a link, an image or a line of its own.
 */
export interface LlmsTxtInput {
  name: string;
  summary: string;
  sections: Array<{ name: string; links: Array<{ title: string; url: string; description: string | null }> }>;
}

export function llmsTxt(input: LlmsTxtInput): string {
  const lines = [`# ${markdownText(input.name)}`, '', `> ${markdownText(input.summary)}`];
  for (const section of input.sections) {
    if (section.links.length === 0) continue;
    lines.push('', `## ${markdownText(section.name)}`, '');
    for (const link of section.links) {
      const description = link.description === null || markdownText(link.description) === '' ? '' : `: ${markdownText(link.description)}`;
      const url = markdownLinkUrl(link.url);
      // An entry whose URL is not http(s) is listed by its title alone rather than linked.
      lines.push(url === null ? `- ${markdownText(link.title)}${description}` : `- [${markdownText(link.title)}](${url})${description}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `text` as Markdown that renders as exactly this text on one line (CommonMark and GFM):
 * - every kind of line break and control character becomes a space, and runs of white space one space, so
 *   a value cannot start a line of its own (a heading, a list item, a fence, a table row);
 * - the punctuation Markdown gives a meaning to is backslash-escaped (CommonMark lets any ASCII punctuation be):
 *   `<` and `>` (HTML tags, autolinks), `[`, `]`, `(` and `)` (links, images, references, footnotes: marked
 *   ends a link's text early at an escaped `]` followed by `(`), `&` (entities),
 *   `` ` `` `*` `_` `~` (code, emphasis, strikethrough), `#` (a heading's closing sequence), `|` (tables) and
 *   the backslash itself, so an escape in the value cannot undo ours.
 * GFM's autolinks of bare URLs still apply to text, and only ever to http(s), www. and e-mail addresses.
 */
export function markdownText(text: string): string {
  return text
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\\`*_~[\]()<>&#|]/g, (c) => `\\${c}`);
}

/**
 * `url` as the destination of an inline Markdown link, or null when it is not an absolute http(s) URL (a
 * `javascript:` or `data:` URL must never become a link). Characters that would end or bend the destination
 * (spaces, parentheses, angle brackets, backslashes, quotes) are percent-encoded.
 */
export function markdownLinkUrl(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  return parsed.href.replace(/[\s()<>\\"'`]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}
