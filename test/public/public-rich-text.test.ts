/**
 * The public API hands sites rich text that holds only what the rich-text model allows (issue 44, defect 2):
 * content stored before the model (here planted past the admin API's check) loses a javascript: link, unknown
 * nodes and marks, and script in HTML, in every public output of it; content that fits is served as stored.
 */
import { expect } from 'chai';
import { plantLegacyRevision } from '../support/legacy-content.ts';
import { everyNodeDocument } from '../support/rich-text-documents.ts';
import { startPublicFixture, type PublicFixture } from './support.ts';

describe('public API: rich text sanitised on the way out', function () {
  this.timeout(60_000);
  let f: PublicFixture;
  let formSetId: string;

  const legacyBody = {
    type: 'doc',
    content: [
      { type: 'paragraph', attrs: { onclick: 'steal()' }, content: [{ type: 'text', text: 'Win a prize', marks: [{ type: 'link', attrs: { href: 'javascript:steal()' } }, { type: 'bold' }] }, { type: 'text', text: ' today', marks: [{ type: 'highlight' }] }] },
      { type: 'rawHtml', attrs: { html: '<script>steal()</script>' } },
      { type: 'image', attrs: { src: 'https://tracker.example/pixel.gif' } },
      { type: 'paragraph', content: [{ type: 'text', text: 'Safe', marks: [{ type: 'link', attrs: { href: 'https://example.org/' } }] }] },
    ],
  };
  const sanitisedBody = {
    type: 'doc',
    content: [
      { type: 'paragraph', content: [{ type: 'text', text: 'Win a prize', marks: [{ type: 'bold' }] }, { type: 'text', text: ' today' }] },
      { type: 'paragraph', content: [{ type: 'text', text: 'Safe', marks: [{ type: 'link', attrs: { href: 'https://example.org/' } }] }] },
    ],
  };
  const legacyHtml = '<p onclick="steal()">Hello <a href="javascript:steal()">there</a><script>steal()</script></p><div><b>kept</b></div><iframe src="https://evil.example/"></iframe>';
  const sanitisedHtml = '<p>Hello there</p><b>kept</b>';

  before(async () => {
    f = await startPublicFixture();
    const created = await f.call('POST', '/form-sets', { body: { slug: 'news', name: 'News', fields: [{ key: 'title', type: 'text', label: 'Title' }, { key: 'body', type: 'tiptap', label: 'Body' }, { key: 'aside', type: 'tiptap', label: 'Aside', locale_shared: true }] } });
    formSetId = created.body.id;
  });
  after(() => f?.stop());

  it('serves rich text that fits the model exactly as stored', async () => {
    const every = everyNodeDocument('1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d');
    await f.publish(formSetId, 'fits', { title: 'Fits', body: every, aside: '<p>An <em>aside</em> with <a href="/more">more</a>.</p>' });
    const entry = await f.get('/form-sets/news/entries/fits');
    expect(entry.body.data.body).to.deep.equal(every);
    expect(entry.body.data.aside).to.equal('<p>An <em>aside</em> with <a href="/more">more</a>.</p>');
  });

  it('content stored before the model: a javascript: link, unknown nodes and marks, script in HTML are gone from every output', async () => {
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'legacy', fields: { title: 'Legacy' } } });
    const entryId = created.body.entry.id;
    const revisionId = await plantLegacyRevision(f.service, f.project.projectId, entryId, { title: { en: 'Legacy' }, body: { en: legacyBody, ja: legacyHtml }, aside: legacyHtml });
    // The admin API keeps what was stored (the console shows it as unsupported blocks).
    expect((await f.call('GET', `/revisions/${revisionId}`)).body.snapshot.body.en).to.deep.equal(legacyBody);

    // A preview of the draft is sanitised like the live entry.
    const session = { token: await f.sessionToken(), headers: { 'X-Project-Id': f.project.projectId } };
    const preview = await f.call('POST', `/revisions/${revisionId}/preview-token`, { token: session.token, headers: session.headers });
    const previewed = await f.get(`/preview/revisions?token=${encodeURIComponent(preview.body.token)}`);
    expect([previewed.status, previewed.body.data.body, previewed.body.data.aside]).to.deep.equal([200, sanitisedBody, sanitisedHtml]);

    expect((await f.call('POST', `/revisions/${revisionId}/submit`, { body: {} })).status).to.equal(200);
    expect((await f.call('POST', `/revisions/${revisionId}/publish`, { body: { revision: 2 } })).status).to.equal(200);
    await f.settle();

    const en = await f.get('/form-sets/news/entries/legacy');
    expect(en.body.data.body).to.deep.equal(sanitisedBody);
    expect(en.body.data.aside).to.equal(sanitisedHtml);
    const ja = await f.get('/form-sets/news/entries/legacy?locale=ja');
    expect(ja.body.data.body).to.equal(sanitisedHtml);
    const list = await f.get('/form-sets/news/entries?include_snapshot=true');
    const item = list.body.items.find((i: { entry: { slug: string } }) => i.entry.slug === 'legacy');
    expect(item.published.snapshot.body).to.deep.equal(sanitisedBody);
    for (const output of [en.text, ja.text, list.text, (await f.get('/content/by-slug?formSetSlug=news&slug=legacy')).text]) {
      expect(output).not.to.include('steal()').and.not.to.include('javascript:').and.not.to.include('highlight').and.not.to.include('tracker.example');
    }
  });
});
