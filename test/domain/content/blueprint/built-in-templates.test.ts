import { expect } from 'chai';
import { createAjv } from '../../../../src/domain/content/form-set/ajv.ts';
import { FIELD_TYPES } from '../../../../src/domain/content/form-set/field-types.ts';
import { FORM_BLUEPRINT_SCHEMA } from '../../../../src/domain/content/blueprint/blueprint-schema.ts';
import { BUILT_IN_TEMPLATES, builtInTemplate, listBuiltInTemplates } from '../../../../src/domain/content/blueprint/built-in-templates.ts';
import { planBlueprint } from '../../../../src/domain/content/blueprint/plan-blueprint.ts';
import { expectDomainError } from '../form-set/fixtures.ts';

describe('built-in form set templates', () => {
  const validate = createAjv().compile(FORM_BLUEPRINT_SCHEMA);

  it('include blog, news, FAQ, events and products', () => {
    expect(BUILT_IN_TEMPLATES.map((t) => t.id)).to.include.members(['blog', 'news', 'faq', 'events', 'products']);
  });

  for (const template of BUILT_IN_TEMPLATES) {
    it(`${template.id}: is valid against the published blueprint schema`, () => {
      expect(validate(template.blueprint), JSON.stringify(validate.errors)).to.equal(true);
    });
    it(`${template.id}: plans without a problem in an empty project`, () => {
      const plan = planBlueprint(template.blueprint, { formSetSlugs: [], masterKeys: [] });
      expect(plan.problems).to.deep.equal([]);
      expect(plan.formSets.every((f) => f.draft !== null)).to.equal(true);
      expect(plan.masters.every((m) => m.action === 'create')).to.equal(true);
    });
    it(`${template.id}: conflicts when its form set slug is taken`, () => {
      const slugs = template.blueprint.formSets.map((f) => f.slug);
      const plan = planBlueprint(template.blueprint, { formSetSlugs: slugs, masterKeys: [] });
      expect(plan.problems.map((p) => p.code)).to.deep.equal(slugs.map(() => 'CONFLICT'));
    });
  }

  it('blog: title, body (tiptap), meta_description, og_image, published_date, category backed by blog_category, with SEO and widget roles', () => {
    const blog = builtInTemplate('blog').blueprint;
    const formSet = blog.formSets[0]!;
    expect(formSet.slug).to.equal('blog');
    expect(formSet.fields.map((f) => [f.key, f.type])).to.deep.equal([
      ['title', 'text'],
      ['body', 'tiptap'],
      ['meta_description', 'textarea'],
      ['og_image', 'image'],
      ['published_date', 'date'],
      ['category', 'select'],
    ]);
    expect(formSet.fields.find((f) => f.key === 'category')!.masterEntityKey).to.equal('blog_category');
    expect(formSet.seoRoles).to.deep.equal({ title: 'title', description: 'meta_description', image: 'og_image', date: 'published_date' });
    expect(formSet.widgetRoles).to.deep.equal({ title: 'title', thumbnail: 'og_image', description: 'meta_description', date: 'published_date', category: 'category' });
    expect(blog.masters.map((m) => m.key)).to.deep.equal(['blog_category']);
    expect(blog.masters[0]!.records.length).to.be.greaterThan(0);
  });

  it('together use every field type', () => {
    const used = new Set(BUILT_IN_TEMPLATES.flatMap((t) => t.blueprint.formSets.flatMap((f) => f.fields.map((field) => field.type))));
    expect([...FIELD_TYPES].filter((type) => !used.has(type))).to.deep.equal([]);
  });

  it('reuse masters that exist when applied to a project that has them', () => {
    const plan = planBlueprint(builtInTemplate('blog').blueprint, { formSetSlugs: [], masterKeys: ['blog_category'] });
    expect(plan.ok).to.equal(true);
    expect(plan.masters[0]!.action).to.equal('reuse');
  });

  it('are listed with what they create, found by id, and cannot be changed', () => {
    expect(listBuiltInTemplates().find((t) => t.id === 'products')).to.deep.include({ formSetSlugs: ['products'], masterKeys: ['product_category', 'product_tag'] });
    expectDomainError(() => builtInTemplate('wiki'), 'NOT_FOUND', /No built-in form set template "wiki"; there are blog, news, faq, events, products/);
    expect(Object.isFrozen(builtInTemplate('blog').blueprint.formSets[0]!.fields)).to.equal(true);
  });
});
