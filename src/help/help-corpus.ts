import type { HelpArticle } from './help-article.ts';
import { HelpIndex, type HelpHit } from './help-index.ts';

/** A passage of an answer: one section, with where it comes from. */
export interface HelpPassage {
  articleId: string;
  articleTitle: string;
  sectionId: string;
  heading: string;
  score: number;
  /** The section's Markdown, cut at PASSAGE_MAX_CHARS. */
  text: string;
}

export interface HelpAnswer {
  question: string;
  /** The passages in Markdown, each followed by its source, or a note that nothing matched. */
  answer: string;
  passages: HelpPassage[];
  /** The articles the passages come from, best first: read them whole with get_admin_help_article. */
  articleIds: string[];
}

/** Longest passage quoted in an answer. */
export const PASSAGE_MAX_CHARS = 1500;
/** Passages quoted in an answer at most. */
export const MAX_PASSAGES = 3;
/** A passage scoring below this share of the best one is left out (it matched common words only). */
const RELATIVE_CUTOFF = 0.4;

/** The admin help: its articles by id, ranked search over their sections, and answers made of passages. Pure. */
export class HelpCorpus {
  readonly #articles: Map<string, HelpArticle>;
  readonly #index: HelpIndex;

  constructor(articles: readonly HelpArticle[]) {
    this.#articles = new Map(articles.map((a) => [a.id, a]));
    if (this.#articles.size !== articles.length) throw new Error('help articles must have distinct ids');
    this.#index = new HelpIndex(articles);
  }

  /** Every article, by id: {id, title, summary}. */
  list(): Array<{ id: string; title: string; summary: string }> {
    return [...this.#articles.values()].sort((a, b) => a.id.localeCompare(b.id)).map(({ id, title, summary }) => ({ id, title, summary }));
  }

  get(id: string): HelpArticle | undefined {
    return this.#articles.get(id);
  }

  search(query: string, limit = 10): HelpHit[] {
    return this.#index.search(query, limit);
  }

  /**
   * Answers a question with the most relevant passages of the help (no text is made up): the best
   * sections by BM25, at most MAX_PASSAGES, each quoted with its article id and heading.
   */
  ask(question: string, maxPassages = MAX_PASSAGES): HelpAnswer {
    const hits = this.#index.search(question, Math.max(1, maxPassages) * 2);
    const best = hits[0]?.score ?? 0;
    const chosen = hits.filter((hit) => hit.score >= best * RELATIVE_CUTOFF).slice(0, Math.max(1, maxPassages));
    const passages = chosen.map(
      (hit): HelpPassage => ({
        articleId: hit.articleId,
        articleTitle: hit.articleTitle,
        sectionId: hit.sectionId,
        heading: hit.heading,
        score: hit.score,
        text: cut(hit.section.markdown, PASSAGE_MAX_CHARS),
      }),
    );
    const articleIds = [...new Set(passages.map((p) => p.articleId))];
    if (passages.length === 0) {
      const titles = this.list().map((a) => `- ${a.id}: ${a.title}`).join('\n');
      return {
        question,
        answer: `No passage of the admin help matches this question. Try other words (search_admin_help), or read an article (get_admin_help_article):\n${titles}`,
        passages,
        articleIds,
      };
    }
    const answer = passages
      .map((p) => `### ${p.articleTitle}: ${p.heading}\n\n${p.text}\n\n(Source: article "${p.articleId}", section "${p.sectionId}")`)
      .join('\n\n');
    return { question, answer, passages, articleIds };
  }
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const slice = text.slice(0, max);
  const paragraph = slice.lastIndexOf('\n\n');
  return `${(paragraph > max * 0.5 ? slice.slice(0, paragraph) : slice).trimEnd()}\n…`;
}
