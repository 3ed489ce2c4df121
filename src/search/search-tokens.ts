/**
 * Search tokens: what a text is indexed under and what a query looks for. Pure and deterministic (the
 * same text gives the same tokens on every machine), so projections may call it.
 *
 * - Text is normalised with NFKC (full-width letters and digits become ASCII, half-width katakana become
 *   full-width), lower-cased (locale-independent), and stripped of default-ignorable characters (soft
 *   hyphens, zero-width joiners, variation selectors).
 * - Runs of CJK characters (Han, Hiragana, Katakana, Hangul and the prolonged sound mark ー) are cut into
 *   overlapping character bigrams, as Lucene's CJK bigram analyzer does, whatever word boundaries a
 *   dictionary would put inside the run: 東京都庁 is indexed under 東京, 京都, 都庁 (and the single
 *   characters 東, 京, 都, 庁), so the query 京都 finds it. A query's run of two or more characters looks
 *   for its bigrams (all of them must occur), a one-character run for that character.
 * - Other text is cut into words by Unicode word segmentation (Intl.Segmenter), keeping word-like
 *   segments: "Node.js", "don't", "3.14" and "foo_bar" stay single tokens; Thai and other scripts
 *   written without spaces are cut by ICU's dictionaries.
 *
 * A token never holds whitespace, control characters or '"', is never empty, and has at most
 * MAX_TOKEN_LENGTH code points (longer words are cut, on both sides alike), so tokens can be stored
 * joined by single spaces and quoted in a full-text query.
 */

/** Longest token, in code points: longer words are cut to this length when indexed and when searched. */
export const MAX_TOKEN_LENGTH = 64;
/** Most distinct tokens a query keeps (the first ones). */
export const MAX_QUERY_TOKENS = 32;

const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30FC]+/gu;
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
/** A surrogate not part of a pair (a string cut in the middle of a character). */
const LONE_SURROGATE = /\p{Cs}/gu;
/** What may not appear inside a token: whitespace, control characters and the quote of query syntax. */
const TOKEN_BREAK = /[\s"\p{Cc}]+/u;

/**
 * A fixed locale, not the machine's default: the root word-break rules, the same everywhere, so that an
 * index built on one machine answers queries made on another.
 */
const words = new Intl.Segmenter('en', { granularity: 'word' });

/** The tokens `text` is indexed under, in order, with repeats (term frequency counts for relevance). */
export function indexTokens(text: string): string[] {
  const tokens: string[] = [];
  forEachPart(text, {
    word: (word) => tokens.push(word),
    cjk: (chars) => {
      for (let i = 0; i < chars.length; i++) {
        tokens.push(chars[i]!);
        if (i + 1 < chars.length) tokens.push(chars[i]! + chars[i + 1]!);
      }
    },
  });
  return tokens;
}

/**
 * The distinct tokens of a search query, in order of first appearance, at most MAX_QUERY_TOKENS. A
 * document matches when it is indexed under every one of them. Empty when the query holds no word.
 */
export function queryTokens(q: string): string[] {
  const tokens = new Set<string>();
  const add = (token: string) => {
    if (tokens.size < MAX_QUERY_TOKENS) tokens.add(token);
  };
  forEachPart(q, {
    word: add,
    cjk: (chars) => {
      if (chars.length === 1) add(chars[0]!);
      for (let i = 0; i + 1 < chars.length; i++) add(chars[i]! + chars[i + 1]!);
    },
  });
  return [...tokens];
}

/** The text joined as a textField value: tokens separated by single spaces. */
export function indexText(...texts: ReadonlyArray<string | null | undefined>): string {
  return texts.flatMap((text) => (text ? indexTokens(text) : [])).join(' ');
}

function forEachPart(text: string, on: { word: (token: string) => void; cjk: (chars: string[]) => void }): void {
  const normalized = normalize(text);
  let last = 0;
  for (const match of normalized.matchAll(CJK_RUN)) {
    segmentWords(normalized.slice(last, match.index), on.word);
    on.cjk(Array.from(match[0]));
    last = match.index + match[0].length;
  }
  segmentWords(normalized.slice(last), on.word);
}

function normalize(text: string): string {
  // NFKC before lower-casing (it makes capitals of full-width letters and of symbols like ㎒), and again
  // after (lower-casing a few capitals yields a base letter plus a combining mark).
  return String(text).replace(LONE_SURROGATE, '\uFFFD').normalize('NFKC').toLowerCase().normalize('NFKC').replace(IGNORABLE, '');
}

function segmentWords(text: string, emit: (token: string) => void): void {
  if (text === '') return;
  if (FAST_TEXT.test(text)) {
    fastWords(text, emit);
    return;
  }
  for (const segment of words.segment(text)) {
    if (!segment.isWordLike) continue;
    for (const piece of segment.segment.split(TOKEN_BREAK)) {
      if (piece !== '') emit(cap(piece));
    }
  }
}

function cap(token: string): string {
  if (token.length <= MAX_TOKEN_LENGTH) return token;
  const codePoints = Array.from(token);
  return codePoints.length <= MAX_TOKEN_LENGTH ? token : codePoints.slice(0, MAX_TOKEN_LENGTH).join('');
}

/**
 * Text of ASCII and the Latin letters of U+00C0–U+024F (and the ideographic comma and full stop between CJK
 * runs): what fastWords segments exactly as Intl.Segmenter does, without its per-segment objects (a rebuild
 * spent most of its time in them). Anything else goes to the segmenter.
 */
const FAST_TEXT = /^[\x00-\x7F\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F\u3001\u3002]*$/;

/** Word-break classes (UAX #29, as ICU's root rules give them) of the characters FAST_TEXT admits. */
const OTHER = 0;
const LETTER = 1;
const DIGIT = 2;
const UNDERSCORE = 3;
/** ':' joins letters only. */
const MID_LETTER = 4;
/** ',' and ';' join digits only. */
const MID_NUM = 5;
/** '.' and "'" join letters to letters and digits to digits. */
const MID_NUM_LET = 6;

function wordBreakClass(code: number): number {
  if ((code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0xc0 && code <= 0x24f)) return LETTER;
  if (code >= 0x30 && code <= 0x39) return DIGIT;
  switch (code) {
    case 0x5f:
      return UNDERSCORE;
    case 0x3a:
      return MID_LETTER;
    case 0x2c:
    case 0x3b:
      return MID_NUM;
    case 0x2e:
    case 0x27:
      return MID_NUM_LET;
    default:
      return OTHER; // also U+3001 and U+3002
  }
}

/**
 * The word-like segments of FAST_TEXT text, as Intl.Segmenter finds them: letters, digits and underscores
 * run together (WB5, WB8–WB10, WB13a/b); a ':', '.' or "'" between two letters and a ',', ';', '.' or "'"
 * between two digits stay inside the word (WB6/7, WB11/12). A segment of one underscore is not word-like;
 * of two or more it is (as ICU reports them). test/search/search-tokens.test.ts compares the two.
 */
function fastWords(text: string, emit: (token: string) => void): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let previous = wordBreakClass(text.charCodeAt(i));
    if (previous === OTHER || previous === MID_LETTER || previous === MID_NUM || previous === MID_NUM_LET) {
      i++;
      continue;
    }
    const start = i;
    let wordLike = previous !== UNDERSCORE;
    i++;
    while (i < n) {
      const next = wordBreakClass(text.charCodeAt(i));
      if (next === LETTER || next === DIGIT || next === UNDERSCORE) {
        if (next !== UNDERSCORE) wordLike = true;
        previous = next;
        i++;
        continue;
      }
      if (next === OTHER || i + 1 >= n) break;
      const after = wordBreakClass(text.charCodeAt(i + 1));
      const joinsLetters = previous === LETTER && after === LETTER && (next === MID_LETTER || next === MID_NUM_LET);
      const joinsDigits = previous === DIGIT && after === DIGIT && (next === MID_NUM || next === MID_NUM_LET);
      if (!joinsLetters && !joinsDigits) break;
      previous = after;
      i += 2;
    }
    if (wordLike || i - start > 1) emit(cap(text.slice(start, i)));
  }
}
