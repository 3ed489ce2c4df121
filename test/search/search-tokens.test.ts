import { expect } from 'chai';
import { MAX_QUERY_TOKENS, MAX_TOKEN_LENGTH, indexText, indexTokens, queryTokens } from '../../src/search/search-tokens.ts';

/** A text matches a query when it is indexed under every token of the query (what the stores check). */
function finds(text: string, q: string): boolean {
  const indexed = new Set(indexTokens(text));
  const wanted = queryTokens(q);
  return wanted.length > 0 && wanted.every((token) => indexed.has(token));
}

describe('search tokens', () => {
  describe('English and other space-separated text', () => {
    it('lower-cases, drops punctuation and keeps repeats for term frequency', () => {
      expect(indexTokens('Hello, World! HELLO again.')).to.deep.equal(['hello', 'world', 'hello', 'again']);
      expect(queryTokens('Hello, World! HELLO again.')).to.deep.equal(['hello', 'world', 'again']);
    });

    it('keeps words with inner dots, apostrophes, underscores and digits whole', () => {
      expect(indexTokens("Node.js isn't foo_bar: v3.14 costs $1,000 (C++)")).to.deep.equal(['node.js', "isn't", 'foo_bar', 'v3.14', 'costs', '1,000', 'c']);
      expect(finds('Getting started with Node.js', 'node.js')).to.equal(true);
      expect(finds('Getting started with Node.js', 'node')).to.equal(false);
    });

    it('normalises with NFKC: full-width letters and digits, ligatures and compatibility symbols', () => {
      expect(indexTokens('ＡＢＣ　ｄｅｆ １２３')).to.deep.equal(['abc', 'def', '123']);
      expect(indexTokens('ﬁle ㎒')).to.deep.equal(['file', 'mhz']);
      expect(finds('ＮＯＤＥ．ＪＳ入門', 'node.js')).to.equal(true);
      expect(finds('café', 'CAFE\u0301')).to.equal(true);
      expect(finds('café', 'cafe')).to.equal(false);
    });

    it('ignores soft hyphens and zero-width characters inside words', () => {
      expect(indexTokens('co\u00ADoperate ze\u200Bro')).to.deep.equal(['cooperate', 'zero']);
    });

    it('cuts scripts written without spaces by dictionary (Thai)', () => {
      expect(finds('ภาษาไทยง่ายนิดเดียว', 'ไทย')).to.equal(true);
    });
  });

  describe('Japanese', () => {
    it('indexes a kanji run as unigrams and overlapping bigrams, whatever its word boundaries', () => {
      expect(indexTokens('東京都庁')).to.deep.equal(['東', '東京', '京', '京都', '都', '都庁', '庁']);
      expect(queryTokens('京都')).to.deep.equal(['京都']);
      expect(finds('東京都庁', '京都')).to.equal(true);
      expect(finds('東京都庁の展望室', '東京')).to.equal(true);
      expect(finds('東京都庁', '大阪')).to.equal(false);
    });

    it('finds 東京 in 東京タワー and a one-character query by its unigram', () => {
      expect(finds('東京タワー', '東京')).to.equal(true);
      expect(finds('東京タワー', 'タワー')).to.equal(true);
      expect(queryTokens('寺')).to.deep.equal(['寺']);
      expect(finds('清水寺', '寺')).to.equal(true);
    });

    it('handles hiragana and katakana, half-width katakana and the prolonged sound mark', () => {
      expect(queryTokens('ひらがな')).to.deep.equal(['ひら', 'らが', 'がな']);
      expect(finds('ひらがなとカタカナ', 'ひらがな')).to.equal(true);
      expect(finds('ひらがなとカタカナ', 'カタカナ')).to.equal(true);
      expect(finds('ひらがなとカタカナ', 'ｶﾀｶﾅ')).to.equal(true);
      expect(indexTokens('コーヒー')).to.deep.equal(['コ', 'コー', 'ー', 'ーヒ', 'ヒ', 'ヒー', 'ー']);
      expect(finds('ｺｰﾋｰを飲む', 'コーヒー')).to.equal(true);
      expect(finds('ひらがな', 'がなひ')).to.equal(false);
    });

    it('splits mixed Latin and Japanese text at the script change', () => {
      expect(indexTokens('Node.jsの使い方')).to.deep.equal(['node.js', 'の', 'の使', '使', '使い', 'い', 'い方', '方']);
      expect(queryTokens('Node.jsの使い方')).to.deep.equal(['node.js', 'の使', '使い', 'い方']);
      expect(finds('Node.jsの使い方', '使い方')).to.equal(true);
      expect(finds('Node.jsの使い方', 'NODE.JS')).to.equal(true);
      expect(finds('2024年の予定', '2024年')).to.equal(true);
    });
  });

  describe('Chinese and Korean', () => {
    it('finds 大学 and 北京 in 北京大学', () => {
      expect(queryTokens('北京大学')).to.deep.equal(['北京', '京大', '大学']);
      expect(finds('北京大学', '大学')).to.equal(true);
      expect(finds('北京大学', '北京')).to.equal(true);
      expect(finds('北京大学', '北京大学')).to.equal(true);
      expect(finds('北京大学', '南京')).to.equal(false);
      expect(finds('中文信息处理', '信息')).to.equal(true);
    });

    it('treats each Hangul word as a run of bigrams', () => {
      expect(indexTokens('한국어 문장')).to.deep.equal(['한', '한국', '국', '국어', '어', '문', '문장', '장']);
      expect(finds('서울특별시', '서울')).to.equal(true);
      expect(finds('한국어 문장', '국어')).to.equal(true);
      expect(finds('한국어 문장', '어문')).to.equal(false);
    });
  });

  describe('segmentation without Intl.Segmenter for Latin text', () => {
    /** What indexTokens gave before its fast path: the segmenter's word-like segments of the normalised text. */
    const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
    const bySegmenter = (text: string) =>
      [...segmenter.segment(text.normalize('NFKC').toLowerCase().normalize('NFKC'))].filter((s) => s.isWordLike).map((s) => s.segment);

    it('cuts ASCII and Latin-1/Latin Extended text into exactly the words Intl.Segmenter finds', () => {
      // The characters whose word-break classes matter (letters, digits, '_', ':', '.', "'", ',', ';') and others.
      const alphabet = [...'aZé0_.:\',;- "\t\n@/ǅßĳ'];
      let seed = 16;
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      for (let n = 0; n < 20_000; n++) {
        const text = Array.from({ length: 1 + Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
        expect(indexTokens(text), JSON.stringify(text)).to.deep.equal(bySegmenter(text));
      }
      for (const text of ['a:b 1:2 a.b 1.2 a.1 1.a 1,2 a,b a..b a._b _.a a_.b _ __ ___ _1 a1_b2.c3 1,000.5', "x.y. 3.14.15 isn't naïve façade ǀx ȸ", 'API。12、x']) {
        expect(indexTokens(text), text).to.deep.equal(bySegmenter(text));
      }
    });
  });

  describe('limits and safety', () => {
    it('never yields an empty token or one with whitespace, control characters or double quotes', () => {
      const texts = ['say "hello"\tthere\u0000now', 'a\u0007b\u2028c\u00A0d', '"""', '  ', '', '!!! ... ---', 'x\uD800y', '東京"タワー"'];
      for (const text of texts) {
        for (const token of [...indexTokens(text), ...queryTokens(text)]) {
          expect(token, JSON.stringify(text)).to.match(/^[^\s"\p{Cc}]+$/u);
        }
      }
      expect(indexTokens('say "hello"\tthere\u0000now')).to.deep.equal(['say', 'hello', 'there', 'now']);
      expect(queryTokens('!!! ... ---')).to.deep.equal([]);
      expect(queryTokens('')).to.deep.equal([]);
    });

    it(`cuts tokens at ${MAX_TOKEN_LENGTH} code points, alike when indexing and searching`, () => {
      const long = 'a'.repeat(100);
      expect(indexTokens(long)).to.deep.equal(['a'.repeat(MAX_TOKEN_LENGTH)]);
      expect(queryTokens(`${long}b`)).to.deep.equal(['a'.repeat(MAX_TOKEN_LENGTH)]);
      const gothic = '\u{10330}'.repeat(70);
      expect(Array.from(indexTokens(gothic)[0]!)).to.have.length(MAX_TOKEN_LENGTH);
      expect(finds(gothic, gothic)).to.equal(true);
    });

    it(`keeps at most ${MAX_QUERY_TOKENS} distinct query tokens, the first ones`, () => {
      const words = Array.from({ length: 40 }, (_, i) => `w${i}`);
      expect(queryTokens(words.join(' '))).to.deep.equal(words.slice(0, MAX_QUERY_TOKENS));
      expect(queryTokens('a a b a b')).to.deep.equal(['a', 'b']);
      expect(queryTokens('東'.repeat(100))).to.deep.equal(['東東']);
    });

    it('indexText joins the tokens of several texts with single spaces', () => {
      expect(indexText('Hello World', null, undefined, '東京')).to.equal('hello world 東 東京 京');
      expect(indexText()).to.equal('');
    });
  });
});
