/**
 * The admin API holds rich text to the one model (issue 44, defect 2): what fits is saved, anything else is a
 * 400 in the error envelope naming the offending node by its path; rich text stored before the rule may be
 * saved back unchanged, never changed into something else that breaks it.
 */
import { expect } from 'chai';
import sharp from 'sharp';
import { startAdminFixture, type AdminFixture } from './support.ts';
import { crashingBodies, everyNodeDocument } from '../support/rich-text-documents.ts';
import { plantLegacyRevision } from '../support/legacy-content.ts';

describe('admin API: rich text held to the model', function () {
  this.timeout(30_000);
  let f: AdminFixture;
  let formSetId: string;
  let assetId: string;
  let n = 0;

  const create = (body: unknown, extra: Record<string, unknown> = {}) => f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: `entry-${++n}`, fields: { title: `Entry ${n}`, body, ...extra } } });
  const expectRefused = (answer: { status: number; body: any }, message: string) => {
    expect(answer.status, JSON.stringify(answer.body)).to.equal(400);
    expect(answer.body.error.code).to.equal('VALIDATION_ERROR');
    expect(answer.body.error.message).to.equal(message);
  };

  before(async () => {
    f = await startAdminFixture();
    const created = await f.call('POST', '/form-sets', { body: { slug: 'posts', name: 'Posts', fields: [{ key: 'title', type: 'text', label: 'Title' }, { key: 'body', type: 'tiptap', label: 'Body' }, { key: 'notes', type: 'tiptap', label: 'Notes', locale_shared: true }] } });
    formSetId = created.body.id;
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer();
    assetId = (await f.call('POST', '/media', { body: { base64: png.toString('base64'), fileName: 'dot.png', altText: 'A dot' } })).body.id;
  });
  after(() => f?.stop());

  it('saves a document holding every node type, mark and attribute of the model, as given', async () => {
    const every = everyNodeDocument(assetId);
    const answer = await create(every, { notes: every });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
    const revision = (await f.call('GET', `/revisions/${answer.body.revision.id}`)).body;
    expect(revision.snapshot.body).to.deep.equal({ en: every });
    expect(revision.snapshot.notes).to.deep.equal(every);
  });

  it('every shape that crashed the console: a link, a quote with a code block, a library image and a table are saved; an unknown mark is refused by its path', async () => {
    for (const [name, { body, fitsModel }] of Object.entries(crashingBodies(assetId))) {
      const answer = await create(body);
      expect(answer.status, `${name}: ${JSON.stringify(answer.body)}`).to.equal(fitsModel ? 201 : 400);
    }
    expectRefused(
      await create(crashingBodies(assetId)['unknownMark']!.body),
      'fields.body.en.content[0].content[0].marks[0]: mark "highlight" is not part of the rich-text model (marks: bold, italic, strike, underline, code, link)',
    );
  });

  it('an HTML string: held to the HTML form of the model (spec section 2 allows HTML), refused by element and attribute', async () => {
    expect((await create('<h2>Programme</h2><p>Read <a href="https://example.org/a" target="_blank">this</a>.<br>Then <strong>that</strong>.</p><ul><li>one</li></ul>')).status).to.equal(201);
    expectRefused(
      await create('<p>Hi</p><script>alert(document.cookie)</script>'),
      'fields.body.en (HTML script[0]): element <script> is not part of the rich-text model (elements: p, h1, h2, h3, h4, h5, h6, ul, ol, li, blockquote, pre, hr, br, img, iframe, table, thead, tbody, tfoot, tr, th, td, strong, b, em, i, s, strike, del, u, code, a)',
    );
    expectRefused(
      await create('<p><a href="javascript:alert(1)" onmouseover="x">x</a></p>', {}),
      'fields.body.en (HTML p[0] > a[0]): attribute "href" of <a> must be an http or https address, a mailto: or tel: address, or a relative reference; other schemes (javascript:, data:, ...) are not allowed; fields.body.en (HTML p[0] > a[0]): attribute "onmouseover" of <a> is not allowed (its attributes: href, target, rel, title)',
    );
  });

  it('refuses javascript: links, images by URL and documents past the limits, naming where', async () => {
    const linked = (href: string) => ({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x', marks: [{ type: 'link', attrs: { href } }] }] }] });
    expectRefused(
      await create({ en: linked('https://ok.example'), ja: linked('javascript:alert(1)') }),
      'fields.body.ja.content[0].content[0].marks[0].attrs.href: must be an http or https address, a mailto: or tel: address, or a relative reference (/path, #anchor); other schemes (javascript:, data:, ...) are not allowed',
    );
    expectRefused(
      await create({ type: 'doc', content: [{ type: 'image', attrs: { src: 'https://cdn.example/x.png' } }] }),
      'fields.body.en.content[0].attrs.src: is not an attribute of node "image" (its attributes: assetId, alt, title); fields.body.en.content[0].attrs.assetId: is required',
    );
    let deep: unknown = { type: 'paragraph' };
    for (let i = 0; i < 26; i++) deep = { type: 'blockquote', content: [deep] };
    expectRefused(await create({ type: 'doc', content: [deep] }), `fields.body.en${'.content[0]'.repeat(25)}: is nested more than 24 levels deep`);
    const many = Array.from({ length: 30 }, (_, i) => ({ type: `widget${i}` }));
    const answer = await create({ type: 'doc', content: many }, {});
    expect(answer.status).to.equal(400);
    expect(answer.body.error.message).to.match(/^fields\.body\.en\.content\[0\]: node type "widget0" is not part of the rich-text model/).and.to.match(/fields\.body\.en: and 15 more problems of the rich-text model$/);
  });

  it('rich text stored before the rule: saved back unchanged with other changes it is kept; changed, or new, it is refused', async () => {
    const entry = await create({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Before' }] }] });
    const entryId = entry.body.entry.id;
    const legacyBlock = { type: 'paragraph', content: [{ type: 'text', text: 'Click', marks: [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }, { type: 'highlight' }] }] };
    const legacy = { type: 'doc', content: [{ type: 'callout', attrs: { tone: 'warn' }, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Careful' }] }] }, legacyBlock] };
    await plantLegacyRevision(f.service, f.project.projectId, entryId, { title: { en: 'Legacy' }, body: { en: legacy }, notes: '<div onclick="x">old html</div>' });
    const save = (fields: Record<string, unknown>) => f.call('POST', `/entries/${entryId}/revisions`, { body: { fields } });

    // The console keeps both blocks as they were and adds a paragraph; the HTML field is sent back as read.
    const added = { ...legacy, content: [...legacy.content, { type: 'paragraph', content: [{ type: 'text', text: 'New text' }] }] };
    const kept = await save({ title: { en: 'Legacy, edited' }, body: { en: added }, notes: '<div onclick="x">old html</div>' });
    expect(kept.status, JSON.stringify(kept.body)).to.equal(201);
    expect((await f.call('GET', `/revisions/${kept.body.revisionId}`)).body.snapshot.body.en).to.deep.equal(added);

    // A legacy block changed is new content: held to the model.
    const changed = { ...added, content: [added.content[0], { ...legacyBlock, content: [{ ...legacyBlock.content[0], text: 'Click here' }] }] };
    expectRefused(
      await save({ title: { en: 'Legacy' }, body: { en: changed }, notes: '<div onclick="x">old html</div>' }),
      'fields.body.en.content[1].content[0].marks[0].attrs.href: must be an http or https address, a mailto: or tel: address, or a relative reference (/path, #anchor); other schemes (javascript:, data:, ...) are not allowed; fields.body.en.content[1].content[0].marks[1]: mark "highlight" is not part of the rich-text model (marks: bold, italic, strike, underline, code, link)',
    );
    expect((await save({ title: { en: 'Legacy' }, body: { en: added }, notes: '<div onclick="y">old html</div>' })).status).to.equal(400);
    // In another entry, the same block is not carried over from anything.
    expect((await create({ type: 'doc', content: [legacyBlock] })).status).to.equal(400);
  });
});
