import { expect } from 'chai';
import { HelpArticleError, parseHelpArticle } from '../../src/help/help-article.ts';
import { HelpCorpus } from '../../src/help/help-corpus.ts';
import { fold, HelpIndex } from '../../src/help/help-index.ts';
import { loadHelpCorpus } from '../../src/help/load-help-corpus.ts';

const article = (id: string, markdown: string) => parseHelpArticle(id, markdown);

describe('help articles', () => {
  it('parses the title, the introduction and the ## sections, ignoring headings inside code fences', () => {
    const parsed = article(
      'sample',
      ['# Sample article', '', 'First paragraph of the **intro**.', '', 'Second paragraph.', '', '## Setting it up', '', 'Run `npm start`.', '', '```md', '## not a heading', '```', '', '### A sub-heading', 'More.', '', '## Setting it up', 'Again.'].join('\n'),
    );
    expect(parsed.title).to.equal('Sample article');
    expect(parsed.summary).to.equal('First paragraph of the intro.');
    expect(parsed.sections.map((s) => [s.id, s.heading])).to.deep.equal([
      ['overview', 'Sample article'],
      ['setting-it-up', 'Setting it up'],
      ['setting-it-up-2', 'Setting it up'],
    ]);
    expect(parsed.sections[1]!.markdown).to.include('## not a heading');
    expect(parsed.sections[1]!.text).to.include('Run npm start.');
    expect(parsed.sections[1]!.text).to.include('A sub-heading');
  });

  it('refuses an article without a title or with a malformed id', () => {
    expect(() => article('no-title', 'Just text.\n\n## Section\nx')).to.throw(HelpArticleError, /no "# Title"/);
    expect(() => article('Bad_Id', '# T')).to.throw(HelpArticleError, /lowercase words/);
  });
});

describe('help search (BM25)', () => {
  const corpus = new HelpCorpus([
    article('publishing', '# Publishing\n\nHow content goes live.\n\n## Scheduling a publish\n\nApprove with publishAt; the job publishes scheduled revisions.\n\n## Reviewing\n\nA reviewer approves or rejects the revision.'),
    article('media', '# Media\n\nFiles and images.\n\n## Uploading files\n\nUpload images as multipart, base64 or a source URL.\n\n## 画像のアップロード\n\n画像はマルチパートまたは base64 でアップロードします。'),
    article('keys', '# Keys\n\nAgent keys and scopes.\n\n## Scopes\n\nA content key may publish revisions but not apply blueprints: applying a blueprint with a content key is FORBIDDEN.'),
  ]);

  it('ranks the section whose heading and body hold the query words first', () => {
    const hits = corpus.search('scheduled publishing');
    expect(hits[0]).to.include({ articleId: 'publishing', sectionId: 'scheduling-a-publish', heading: 'Scheduling a publish' });
    expect(hits.every((h, i) => i === 0 || h.score <= hits[i - 1]!.score)).to.equal(true);
  });

  it('weighs rare words above common ones and ignores question words', () => {
    const hits = corpus.search('How do I apply a blueprint?');
    expect(hits[0]).to.include({ articleId: 'keys', sectionId: 'scopes' });
    expect(HelpIndex.queryTerms('How do I apply a blueprint?')).to.deep.equal(['apply', 'blueprint']);
    // A query of function words only still searches for them.
    expect(HelpIndex.queryTerms('how')).to.deep.equal(['how']);
  });

  it('finds Japanese text by character bigrams, and excerpts around the match', () => {
    const hits = corpus.search('画像をアップロード');
    expect(hits[0]).to.include({ articleId: 'media', heading: '画像のアップロード' });
    expect(hits[0]!.excerpt).to.include('画像');
    expect(corpus.search('存在しない言葉')).to.deep.equal([]);
  });

  it('folds English endings on both sides', () => {
    expect(['publish', 'publishes', 'published', 'publishing'].map(fold)).to.deep.equal(['publish', 'publish', 'publish', 'publish']);
    expect(['entries', 'entry'].map(fold)).to.deep.equal(['entry', 'entry']);
    expect(['schedule', 'scheduled', 'scheduling'].map(fold)).to.deep.equal(['schedul', 'schedul', 'schedul']);
    expect(['submitted', 'submit', 'settings', 'setting', 'status', 'access'].map(fold)).to.deep.equal(['submit', 'submit', 'set', 'set', 'status', 'access']);
    expect(corpus.search('uploaded image')[0]).to.include({ articleId: 'media' });
  });

  it('answers a question with the best passages and their article ids, or says nothing matched', () => {
    const answer = corpus.ask('Why is applying a blueprint with a content key forbidden?');
    expect(answer.articleIds[0]).to.equal('keys');
    expect(answer.passages[0]).to.include({ articleId: 'keys', sectionId: 'scopes' });
    expect(answer.answer).to.include('applying a blueprint with a content key is FORBIDDEN');
    expect(answer.answer).to.include('article "keys"');
    const none = corpus.ask('zebra quantum');
    expect(none.passages).to.deep.equal([]);
    expect(none.answer).to.match(/No passage/);
    expect(none.answer).to.include('keys: Keys');
  });
});

describe('the admin help corpus (docs/help)', () => {
  const help = loadHelpCorpus();

  it('has the articles the service needs, each with a title and sections', () => {
    const ids = help.list().map((a) => a.id);
    for (const id of ['getting-started', 'workflow', 'webhooks', 'media', 'contact-forms', 'locales', 'keys-and-scopes', 'mcp']) expect(ids).to.include(id);
    for (const { id } of help.list()) {
      const a = help.get(id)!;
      expect(a.title, id).to.not.equal('');
      expect(a.sections.length, id).to.be.greaterThan(2);
    }
  });

  it('answers typical questions from the right article, in English and Japanese', () => {
    const top = (q: string) => help.search(q, 1)[0]?.articleId;
    expect(top('verify the webhook signature')).to.equal('webhooks');
    expect(top('schedule a publish for later')).to.equal('workflow');
    expect(top('content scope key forbidden blueprint')).to.be.oneOf(['keys-and-scopes', 'blueprints-and-masters']);
    expect(top('upload an image with base64')).to.equal('media');
    expect(top('honeypot spam')).to.equal('contact-forms');
    expect(top('TRANSLATION_API_URL')).to.equal('locales');
    expect(top('Streamable HTTP remote agent')).to.equal('mcp');
    expect(top('自動翻訳の設定')).to.equal('locales');
    expect(top('お問い合わせフォームの自動返信')).to.equal('contact-forms');
    expect(top('署名の検証')).to.equal('webhooks');
    const answer = help.ask('How do I publish a revision with an agent?');
    expect(answer.articleIds).to.include('workflow');
    expect(answer.passages.length).to.be.within(1, 3);
  });
});
