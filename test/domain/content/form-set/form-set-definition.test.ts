import { expect } from 'chai';
import {
  formSetDefinitionProblems,
  validateFormSetDefinition,
  validateFormSetDraft,
  patternProblem,
  removedParts,
} from '../../../../src/domain/content/form-set/form-set-definition.ts';
import { validateFormSetSlug } from '../../../../src/domain/content/form-set/form-set-slug.ts';
import { resolveSeoRoles, widgetRolesByField } from '../../../../src/domain/content/form-set/roles.ts';
import { blogDefinition, expectDomainError } from './fixtures.ts';

type Mutation = (d: Record<string, unknown>) => void;
const fields = (d: Record<string, unknown>) => d.fields as Array<Record<string, unknown>>;
const blocks = (d: Record<string, unknown>) => d.blocks as Array<Record<string, unknown>>;

function problemsOf(mutate: Mutation) {
  const definition = structuredClone(blogDefinition());
  mutate(definition);
  return formSetDefinitionProblems(definition).map((p) => `${p.path}: ${p.message}`);
}

describe('form set definition', () => {
  it('accepts a valid definition and fills in defaults', () => {
    const definition = validateFormSetDefinition(blogDefinition());
    expect(definition.fields[1]).to.deep.equal({ key: 'body', type: 'tiptap', label: 'Body', required: false, locale_shared: false });
    expect(definition.seoRoles).to.deep.equal({ title: 'title', description: 'meta_description', image: 'og_image', date: 'published_date' });
    const minimal = validateFormSetDefinition({ id: blogDefinition().id, slug: 'a', name: 'A', fields: [] });
    expect(minimal).to.deep.include({ description: null, blocks: [], seoRoles: {}, widgetRoles: {} });
  });

  it('accepts a draft without id', () => {
    const { id: _id, ...draft } = blogDefinition();
    expect(validateFormSetDraft(draft).slug).to.equal('blog');
  });

  const badCases: Array<[string, Mutation, string]> = [
    ['an id that is not a UUID', (d) => (d.id = 'abc'), 'id: must be a UUID'],
    ['an uppercase slug', (d) => (d.slug = 'Blog'), 'slug: may only contain lowercase letters, digits and single hyphens between them'],
    ['a slug with a leading hyphen', (d) => (d.slug = '-blog'), 'slug: must not begin or end with a hyphen'],
    ['a slug with a trailing hyphen', (d) => (d.slug = 'blog-'), 'slug: must not begin or end with a hyphen'],
    ['a slug with a double hyphen', (d) => (d.slug = 'my--blog'), 'slug: must not contain two hyphens in a row'],
    ['an empty slug', (d) => (d.slug = ''), 'slug: must not be empty'],
    ['a slug of 101 characters', (d) => (d.slug = 'a'.repeat(101)), 'slug: must be at most 100 characters'],
    ['a blank name', (d) => (d.name = '  '), 'name: must not be empty'],
    ['a missing name', (d) => delete d.name, 'name: is required'],
    ['a description that is a number', (d) => (d.description = 5), 'description: must be a string'],
    ['a field key with an uppercase letter', (d) => (fields(d)[0]!.key = 'Title'), 'fields[0].key: must be a lowercase letter followed by lowercase letters, digits or underscores'],
    ['a field key starting with a digit', (d) => (fields(d)[0]!.key = '1title'), 'fields[0].key: must be a lowercase letter'],
    ['a field key with a hyphen', (d) => (fields(d)[0]!.key = 'the-title'), 'fields[0].key: must be a lowercase letter'],
    ['a field key of 65 characters', (d) => (fields(d)[0]!.key = 'a'.repeat(65)), 'fields[0].key: must be at most 64 characters'],
    ['an unknown field type', (d) => (fields(d)[0]!.type = 'richtext'), 'fields.title.type: must be one of: text, url, textarea, tiptap'],
    ['an empty label', (d) => (fields(d)[0]!.label = ''), 'fields.title.label: must not be empty'],
    ['required that is not a boolean', (d) => (fields(d)[0]!.required = 'yes'), 'fields.title.required: must be a boolean'],
    ['an unknown field property', (d) => (fields(d)[0]!.maxlength = 3), 'fields.title.maxlength: is not a known property'],
    ['two fields with one key', (d) => (fields(d)[1]!.key = 'title'), 'fields[0].key: "title" is the key of more than one field; field keys must be unique'],
    ['a select without masterEntityKey', (d) => delete fields(d)[5]!.masterEntityKey, 'fields.category.masterEntityKey: is required for select fields'],
    ['a radio without masterEntityKey', (d) => fields(d).push({ key: 'r', type: 'radio', label: 'R' }), 'fields.r.masterEntityKey: is required for radio fields'],
    ['a multiselect without masterEntityKey', (d) => fields(d).push({ key: 'm', type: 'multiselect', label: 'M' }), 'fields.m.masterEntityKey: is required for multiselect fields'],
    ['a text field with masterEntityKey', (d) => (fields(d)[0]!.masterEntityKey = 'blog_category'), 'fields.title.masterEntityKey: only select, radio and multiselect fields take a masterEntityKey, not text fields'],
    ['an invalid masterEntityKey', (d) => (fields(d)[5]!.masterEntityKey = 'Blog Category'), 'fields.category.masterEntityKey: must be a lowercase letter followed by'],
    ['maxItems on a text field', (d) => (fields(d)[0]!.limits = { maxItems: 3 }), 'fields.title.limits.maxItems: does not apply to text fields (they take minLength, maxLength, pattern)'],
    ['any limit on an image field', (d) => (fields(d)[3]!.limits = { maxLength: 3 }), 'fields.og_image.limits.maxLength: does not apply to image fields (they take no limits)'],
    ['minLength above maxLength', (d) => (fields(d)[0]!.limits = { minLength: 10, maxLength: 5 }), 'fields.title.limits: minLength (10) must not be greater than maxLength (5)'],
    ['min above max', (d) => fields(d).push({ key: 'n', type: 'number', label: 'N', limits: { min: 5, max: 1 } }), 'fields.n.limits: min (5) must not be greater than max (1)'],
    ['a pattern that does not compile', (d) => (fields(d)[0]!.limits = { pattern: '([a-z' }), 'fields.title.limits.pattern: is not a valid regular expression'],
    ['a pattern that repeats a repeating group', (d) => (fields(d)[0]!.limits = { pattern: '^(a+)+$' }), 'fields.title.limits.pattern: must not repeat a group that itself repeats'],
    ['a pattern that repeats a repeating nested group', (d) => (fields(d)[0]!.limits = { pattern: '^((ab)*c)*$' }), 'fields.title.limits.pattern: must not repeat a group that itself repeats'],
    ['a negative maxLength', (d) => (fields(d)[0]!.limits = { maxLength: -1 }), 'fields.title.limits.maxLength: must be at least 1'],
    ['a fractional maxItems', (d) => fields(d).push({ key: 'g', type: 'image_gallery', label: 'G', limits: { maxItems: 1.5 } }), 'fields.g.limits.maxItems: must be an integer'],
    ['an unknown limit', (d) => (fields(d)[0]!.limits = { maxWords: 3 }), 'fields.title.limits.maxWords: is not a known property'],
    ['a block listing an unknown field', (d) => blocks(d)[0]!.fieldKeys = ['title', 'nope'], 'blocks.content.fieldKeys[1]: no field has the key "nope"'],
    ['a field in two blocks', (d) => blocks(d)[1]!.fieldKeys = ['title'], 'blocks.seo.fieldKeys[0]: field "title" is already in block "content"; a field belongs to at most one block'],
    ['a field twice in one block', (d) => blocks(d)[0]!.fieldKeys = ['title', 'title'], 'blocks.content.fieldKeys[1]: field "title" is listed twice in this block'],
    ['two blocks with one id', (d) => (blocks(d)[1]!.id = 'content'), 'blocks[0].id: "content" is the id of more than one block; block ids must be unique'],
    ['a block id with spaces', (d) => (blocks(d)[1]!.id = 'my block'), 'blocks[1].id: must be letters, digits, underscores or hyphens'],
    ['a block without label', (d) => delete blocks(d)[0]!.label, 'blocks.content.label: is required'],
    ['an SEO role on a missing field', (d) => (d.seoRoles = { title: 'headline' }), 'seoRoles.title: no field has the key "headline"'],
    ['an SEO image role on a text field', (d) => (d.seoRoles = { image: 'title' }), 'seoRoles.image: field "title" is a text field; the SEO role image needs a field of type image'],
    ['an SEO date role on a text field', (d) => (d.seoRoles = { date: 'title' }), 'seoRoles.date: field "title" is a text field; the SEO role date needs a field of type date'],
    ['an unknown SEO role', (d) => (d.seoRoles = { keywords: 'title' }), 'seoRoles.keywords: is not a known property'],
    ['a widget thumbnail role on a date field', (d) => (d.widgetRoles = { thumbnail: 'published_date' }), 'widgetRoles.thumbnail: field "published_date" is a date field; the widget role thumbnail needs a field of type image or image_gallery'],
    ['a widget category role on a missing field', (d) => (d.widgetRoles = { category: 'tags' }), 'widgetRoles.category: no field has the key "tags"'],
    ['an unknown widget role', (d) => (d.widgetRoles = { subtitle: 'title' }), 'widgetRoles.subtitle: is not a known property'],
    ['an unknown property', (d) => (d.color = 'red'), 'color: is not a known property'],
    ['fields that are not an array', (d) => (d.fields = {}), 'fields: must be an array'],
    ['more than 200 fields', (d) => (d.fields = Array.from({ length: 201 }, (_, i) => ({ key: `f${i}`, type: 'text', label: 'F' }))), 'fields: must have at most 200 items'],
  ];

  for (const [name, mutate, expected] of badCases) {
    it(`refuses ${name}, naming the problem`, () => {
      const problems = problemsOf(mutate);
      expect(problems.some((p) => p.startsWith(expected)), `expected "${expected}" among:\n${problems.join('\n')}`).to.equal(true);
    });
  }

  it('reports every problem at once, and throws VALIDATION_ERROR naming each', () => {
    const definition = structuredClone(blogDefinition());
    definition.slug = 'Bad Slug';
    fields(definition)[0]!.limits = { maxItems: 3 };
    delete fields(definition)[5]!.masterEntityKey;
    definition.seoRoles = { image: 'title' };
    const error = expectDomainError(() => validateFormSetDefinition(definition), 'VALIDATION_ERROR');
    for (const part of ['slug:', 'fields.title.limits.maxItems:', 'fields.category.masterEntityKey:', 'seoRoles.image:']) expect(error.message).to.contain(part);
    expect(formSetDefinitionProblems(definition)).to.have.length(4);
  });

  it('refuses input that is not an object', () => {
    expectDomainError(() => validateFormSetDefinition('blog'), 'VALIDATION_ERROR', /must be an object/);
  });

  it('names what an update removes', () => {
    const before = validateFormSetDefinition(blogDefinition());
    const after = { ...before, fields: before.fields.filter((f) => f.key !== 'body'), blocks: before.blocks.filter((b) => b.id !== 'seo') };
    expect(removedParts(before, after)).to.deep.equal({ fieldKeys: ['body'], blockIds: ['seo'] });
  });
});

describe('patternProblem', () => {
  it('accepts ordinary patterns', () => {
    for (const pattern of ['^[A-Z0-9][A-Z0-9-]*$', '^https://', '^(foo|bar)+$', '^\\d{3}-\\d{4}$', '^([a-z]{2})?$', '^[(]+$', '^\\(a+\\)+$', '^(?:ab)+$']) {
      expect(patternProblem(pattern), pattern).to.equal(null);
    }
  });
  it('refuses nested repetition and invalid expressions', () => {
    for (const pattern of ['(a+)+', '(a*)*', '(\\w+\\s?)*$', '(x{1,3}){2,}', '((a|b)+c)+', '(?:a+)+']) expect(patternProblem(pattern), pattern).to.match(/must not repeat a group/);
    expect(patternProblem('(')).to.match(/is not a valid regular expression/);
  });
});

describe('validateFormSetSlug', () => {
  it('accepts lowercase letters, digits and single hyphens', () => {
    for (const slug of ['blog', 'a', 'news-2026', '2026', 'a-b-c', 'x'.repeat(100)]) expect(validateFormSetSlug(slug), slug).to.equal(null);
  });
  it('names the rule a bad slug breaks', () => {
    expect(validateFormSetSlug('')).to.equal('must not be empty');
    expect(validateFormSetSlug('x'.repeat(101))).to.equal('must be at most 100 characters');
    expect(validateFormSetSlug('Blog')).to.match(/may only contain lowercase letters, digits and single hyphens/);
    expect(validateFormSetSlug('my_blog')).to.match(/may only contain/);
    expect(validateFormSetSlug('ブログ')).to.match(/may only contain/);
    expect(validateFormSetSlug('-a')).to.equal('must not begin or end with a hyphen');
    expect(validateFormSetSlug('a-')).to.equal('must not begin or end with a hyphen');
    expect(validateFormSetSlug('a--b')).to.equal('must not contain two hyphens in a row');
    expect(validateFormSetSlug(3)).to.equal('must be a string');
  });
});

describe('SEO and widget roles', () => {
  it('infers unmapped SEO roles from common field names (title, body)', () => {
    const definition = validateFormSetDefinition(
      blogDefinition({
        seoRoles: {},
        fields: [
          { key: 'title', type: 'text', label: 'Title' },
          { key: 'body', type: 'tiptap', label: 'Body' },
          { key: 'og_image', type: 'image', label: 'Image' },
          { key: 'published_date', type: 'text', label: 'Not a date field' },
        ],
        blocks: [],
        widgetRoles: {},
      }),
    );
    expect(resolveSeoRoles(definition)).to.deep.equal({ title: 'title', description: 'body', image: 'og_image' });
    expect(resolveSeoRoles({ ...definition, seoRoles: { title: 'body' } }).title).to.equal('body');
  });

  it('gives widget roles by field key, as entry responses show them', () => {
    expect(widgetRolesByField({ title: 'title', thumbnail: 'og_image', category: 'category' })).to.deep.equal({ title: 'title', og_image: 'thumbnail', category: 'category' });
  });
});
