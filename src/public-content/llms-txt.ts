/**
 * llms.txt (https://llmstxt.org): an H1 with the site's name, a blockquote summary, then one H2 section per
 * form set listing its published entries as `- [title](url): description`.
 */
export interface LlmsTxtInput {
  name: string;
  summary: string;
  sections: Array<{ name: string; links: Array<{ title: string; url: string; description: string | null }> }>;
}

export function llmsTxt(input: LlmsTxtInput): string {
  const lines = [`# ${oneLine(input.name)}`, '', `> ${oneLine(input.summary)}`];
  for (const section of input.sections) {
    if (section.links.length === 0) continue;
    lines.push('', `## ${oneLine(section.name)}`, '');
    for (const link of section.links) {
      const description = link.description === null ? '' : `: ${oneLine(link.description)}`;
      lines.push(`- [${linkText(link.title)}](${linkUrl(link.url)})${description}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Markdown is line-based: a value never spans lines. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function linkText(text: string): string {
  return oneLine(text).replace(/[[\]\\]/g, (c) => `\\${c}`);
}

/** URLs are already encoded; parentheses and spaces would end the link early. */
function linkUrl(url: string): string {
  return url.replace(/[()\s]/g, (c) => encodeURIComponent(c));
}
