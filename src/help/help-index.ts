import { indexTokens, queryTokens } from '../search/search-tokens.ts';
import type { HelpArticle, HelpSection } from './help-article.ts';

/** One ranked section. */
export interface HelpHit {
  articleId: string;
  articleTitle: string;
  sectionId: string;
  heading: string;
  score: number;
  /** A short passage of the section around the first query word it holds. */
  excerpt: string;
  section: HelpSection;
}

/** English function words that say nothing about what a question is about. */
const STOP_WORDS = new Set(
  'a an and are as at be by can could do does did for from has have how i if in into is it its me my of on or our should so than that the their then there these this to was we were what when where which who why will with would you your'.split(' '),
);

/** BM25 parameters (Robertson's usual values). */
const K1 = 1.2;
const B = 0.75;
/** A heading word counts as this many body words; the article title as one. */
const HEADING_WEIGHT = 3;
const EXCERPT_BEFORE = 80;
const EXCERPT_LENGTH = 280;

interface IndexedSection {
  article: HelpArticle;
  section: HelpSection;
  length: number;
  frequencies: Map<string, number>;
}

/**
 * Ranked search over the sections of the help articles: Okapi BM25, one document per section, with the
 * section heading weighted above its body and the article title counted once. Text is tokenised by
 * src/search/search-tokens.ts (NFKC, lower case, Unicode words, CJK bigrams), so Japanese queries find
 * Japanese and mixed text without a dictionary; Latin words are then folded by a light English suffix
 * rule (publishes, published, publishing -> publish) on both sides alike. A section matches when it holds
 * at least one query token; rarer tokens weigh more. Pure and deterministic.
 */
export class HelpIndex {
  readonly #sections: IndexedSection[];
  readonly #documentFrequency = new Map<string, number>();
  readonly #averageLength: number;

  constructor(articles: readonly HelpArticle[]) {
    this.#sections = articles.flatMap((article) =>
      article.sections.map((section) => {
        const tokens = [...repeat(terms(section.heading), HEADING_WEIGHT), ...terms(article.title), ...terms(section.text)];
        const frequencies = new Map<string, number>();
        for (const token of tokens) frequencies.set(token, (frequencies.get(token) ?? 0) + 1);
        return { article, section, length: tokens.length, frequencies };
      }),
    );
    for (const indexed of this.#sections) {
      for (const token of indexed.frequencies.keys()) this.#documentFrequency.set(token, (this.#documentFrequency.get(token) ?? 0) + 1);
    }
    const total = this.#sections.reduce((sum, s) => sum + s.length, 0);
    this.#averageLength = this.#sections.length === 0 ? 1 : total / this.#sections.length;
  }

  /**
   * The query's tokens as the index sees them; empty when the query holds no word. Question words and
   * other English function words are dropped (how do I publish -> publish) unless nothing else is left.
   */
  static queryTerms(query: string): string[] {
    const all = [...new Set(queryTokens(query))];
    const meaningful = all.filter((token) => !STOP_WORDS.has(token));
    return [...new Set((meaningful.length > 0 ? meaningful : all).map(fold))];
  }

  /** The best sections for the query, best first; ties keep the corpus order. Empty for a query without words. */
  search(query: string, limit = 10): HelpHit[] {
    const queryTerms = HelpIndex.queryTerms(query);
    if (queryTerms.length === 0 || limit <= 0) return [];
    const count = this.#sections.length;
    const scored: Array<{ indexed: IndexedSection; score: number; order: number }> = [];
    this.#sections.forEach((indexed, order) => {
      let score = 0;
      for (const term of queryTerms) {
        const tf = indexed.frequencies.get(term);
        if (!tf) continue;
        const df = this.#documentFrequency.get(term) ?? 0;
        const idf = Math.log(1 + (count - df + 0.5) / (df + 0.5));
        score += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * indexed.length) / this.#averageLength));
      }
      if (score > 0) scored.push({ indexed, score, order });
    });
    scored.sort((a, b) => b.score - a.score || a.order - b.order);
    return scored.slice(0, limit).map(({ indexed, score }) => ({
      articleId: indexed.article.id,
      articleTitle: indexed.article.title,
      sectionId: indexed.section.id,
      heading: indexed.section.heading,
      score: Math.round(score * 1000) / 1000,
      excerpt: excerptAround(indexed.section.text, query),
      section: indexed.section,
    }));
  }
}

function terms(text: string): string[] {
  return indexTokens(text).map(fold);
}

function repeat<T>(items: T[], times: number): T[] {
  return Array.from({ length: times }, () => items).flat();
}

/**
 * Light English suffix folding for plain Latin words longer than four letters, on index and query alike:
 * a plural ending (-ies to -y, -es after s, x, z, ch or sh, -s but not -ss, -us or -is), then -ing, -ed or
 * -ly, then a final -e are dropped, so publish, publishes, published and publishing meet, as do schedule and
 * scheduled, setting and settings. Other tokens are kept as they are.
 */
export function fold(token: string): string {
  if (token.length <= 4 || !/^[a-z]+$/.test(token)) return token;
  let stem = token;
  if (stem.endsWith('ies')) stem = `${stem.slice(0, -3)}y`;
  else if (/(?:s|x|z|ch|sh)es$/.test(stem)) stem = stem.slice(0, -2);
  else if (stem.endsWith('s') && !/(?:ss|us|is)$/.test(stem)) stem = stem.slice(0, -1);
  if (stem.endsWith('ing') && stem.length > 6) stem = undouble(stem.slice(0, -3));
  else if (stem.endsWith('ed') && stem.length > 5) stem = undouble(stem.slice(0, -2));
  else if (stem.endsWith('ly') && stem.length > 6) stem = stem.slice(0, -2);
  if (stem.endsWith('e') && stem.length > 4) stem = stem.slice(0, -1);
  return stem;
}

/** submitted -> submitt -> submit; keeps -ll and -ss (called, passed). */
function undouble(stem: string): string {
  return /([b-df-hj-kmnp-rtv-z])\1$/.test(stem) && !/(?:ll|ss)$/.test(stem) ? stem.slice(0, -1) : stem;
}

/** About EXCERPT_LENGTH characters of the text, starting a little before the first query word found in it. */
export function excerptAround(text: string, query: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const haystack = flat.normalize('NFKC').toLowerCase();
  const words = queryTokens(query).filter((w) => w.length > 1 || /[^\x00-\x7f]/.test(w));
  let at = -1;
  for (const word of words) {
    const found = haystack.indexOf(word);
    if (found >= 0 && (at < 0 || found < at)) at = found;
  }
  let start = at <= EXCERPT_BEFORE ? 0 : at - EXCERPT_BEFORE;
  if (start > 0) {
    const space = flat.indexOf(' ', start);
    if (space >= 0 && space < at) start = space + 1;
  }
  const end = Math.min(flat.length, start + EXCERPT_LENGTH);
  return `${start > 0 ? '…' : ''}${flat.slice(start, end).trim()}${end < flat.length ? '…' : ''}`;
}
