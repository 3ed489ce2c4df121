import { expect } from 'chai';
import { fold } from '../../../../src/domain/decider.ts';
import { createAjv } from '../../../../src/domain/content/form-set/ajv.ts';
import { formSetDecider } from '../../../../src/domain/content/form-set/form-set-decider.ts';
import { masterDecider } from '../../../../src/domain/content/master/master-decider.ts';
import { FORM_BLUEPRINT_SCHEMA, MASTER_BLUEPRINT_SCHEMA } from '../../../../src/domain/content/blueprint/blueprint-schema.ts';
import { assertMayApplyBlueprint, assertMayApplyMasterBlueprint } from '../../../../src/domain/content/blueprint/blueprint-policy.ts';
import {
  assertPlanApplicable,
  blueprintCommands,
  formBlueprintSchemaProblems,
  planBlueprint,
  planMasterBlueprint,
} from '../../../../src/domain/content/blueprint/plan-blueprint.ts';
import { PROJECT_ID, contentKey, expectDomainError, fullKey, schemaKey, tenantAdmin, tenantUser } from '../form-set/fixtures.ts';

const none = { formSetSlugs: [], masterKeys: [] };

function minimalBlueprint() {
  return {
    formSets: [
      {
        slug: 'articles',
        name: 'Articles',
        blocks: [{ label: 'Main', fieldKeys: ['title', 'topic'] }],
        fields: [
          { key: 'title', type: 'text', label: 'Title', required: true },
          { key: 'topic', type: 'select', label: 'Topic', masterEntityKey: 'topics' },
        ],
        seoRoles: { title: 'title' },
      },
    ],
    masters: [{ key: 'topics', name: 'Topics', records: [{ value: 'a', labels: { en: 'A' } }, { value: 'b', labels: { en: 'B' }, parent: 'a' }] }],
  };
}

const listing = (plan: { problems: Array<{ code: string; path: string; message: string }> }) => plan.problems.map((p) => `${p.code} ${p.path}: ${p.message}`);

describe('form blueprints', () => {
  it('publish a JSON Schema that is plain JSON and compiles under strict ajv', () => {
    expect(JSON.parse(JSON.stringify(FORM_BLUEPRINT_SCHEMA))).to.deep.equal(FORM_BLUEPRINT_SCHEMA);
    expect(JSON.parse(JSON.stringify(MASTER_BLUEPRINT_SCHEMA))).to.deep.equal(MASTER_BLUEPRINT_SCHEMA);
    const ajv = createAjv();
    expect(ajv.compile(FORM_BLUEPRINT_SCHEMA)(minimalBlueprint())).to.equal(true);
    expect(ajv.compile(MASTER_BLUEPRINT_SCHEMA)({ masters: minimalBlueprint().masters })).to.equal(true);
  });

  it('plan a valid blueprint: what would be created, with drafts and completed records', () => {
    const plan = planBlueprint(minimalBlueprint(), none);
    expect(plan.ok).to.equal(true);
    expect(plan.problems).to.deep.equal([]);
    expect(plan.formSets).to.have.length(1);
    expect(plan.formSets[0]).to.deep.include({ slug: 'articles', name: 'Articles', fieldCount: 2, blockCount: 1, masterKeys: ['topics'] });
    expect(plan.formSets[0]!.draft!.blocks).to.deep.equal([{ id: 'block-1', label: 'Main', fieldKeys: ['title', 'topic'] }]);
    expect(plan.formSets[0]!.draft!.fields[0]).to.deep.equal({ key: 'title', type: 'text', label: 'Title', required: true, locale_shared: false });
    expect(plan.masters).to.deep.equal([
      {
        key: 'topics',
        name: 'Topics',
        recordCount: 2,
        action: 'create',
        records: [
          { value: 'a', labels: { en: 'A' }, order: 0, parent: null },
          { value: 'b', labels: { en: 'B' }, order: 1, parent: 'a' },
        ],
      },
    ]);
  });

  it('report every problem at once, never stopping at the first', () => {
    const document = {
      formSets: [
        {
          slug: 'blog',
          name: 'Blog',
          fields: [
            { key: 'Title', type: 'text', label: 'T' },
            { key: 'cat', type: 'select', label: 'C', masterEntityKey: 'nope' },
            { key: 'x', type: 'textt', label: '' },
            { key: 'tags', type: 'multiselect', label: 'Tags' },
          ],
          seoRoles: { image: 'cat' },
          blocks: [{ label: 'A', fieldKeys: ['zz'] }],
        },
        { slug: 'Bad--slug', name: ' ', fields: [] },
        { slug: 'dup', name: 'D', fields: [{ key: 'a', type: 'number', label: 'A', limits: { min: 5, max: 1, maxLength: 3 } }] },
        { slug: 'dup', name: 'D2', fields: [{ key: 'a', type: 'text', label: 'A' }, { key: 'a', type: 'text', label: 'B' }] },
      ],
      masters: [
        { key: 'm', name: 'M', records: [{ value: 'a', labels: { en: 'A' }, parent: 'b' }, { value: 'b', labels: { EN: 'B' }, parent: 'a' }] },
        { key: 'm', name: 'M again' },
      ],
      extra: 1,
    };
    const plan = planBlueprint(document, { formSetSlugs: ['blog'], masterKeys: [] });
    expect(plan.ok).to.equal(false);
    const found = listing(plan);
    const expected = [
      'VALIDATION_ERROR extra: is not a known property',
      'VALIDATION_ERROR formSets.blog.fields[0].key: must be a lowercase letter followed by lowercase letters, digits or underscores, at most 64 characters',
      'VALIDATION_ERROR formSets.blog.fields.x.type: must be one of: text, url, textarea, tiptap, number, boolean, date, select, radio, multiselect, image, file, image_gallery, video_embed, entry_ref',
      'VALIDATION_ERROR formSets.blog.fields.x.label: must not be empty',
      'VALIDATION_ERROR formSets.blog.fields.tags.masterEntityKey: is required for multiselect fields (select, radio and multiselect take their values from a master)',
      'VALIDATION_ERROR formSets.blog.blocks.block-1.fieldKeys[0]: no field has the key "zz"',
      'VALIDATION_ERROR formSets.blog.seoRoles.image: field "cat" is a select field; the SEO role image needs a field of type image',
      'CONFLICT formSets.blog.slug: a form set with slug "blog" already exists in this project',
      'VALIDATION_ERROR formSets.blog.fields.cat.masterEntityKey: master "nope" neither exists in this project nor is defined in the blueprint\'s masters',
      'VALIDATION_ERROR formSets[1].slug: must be lowercase letters, digits and single hyphens between them, at most 100 characters',
      'VALIDATION_ERROR formSets[1].name: must not be blank',
      'VALIDATION_ERROR formSets[1].fields: must have at least one item',
      'VALIDATION_ERROR formSets[2].fields.a.limits.maxLength: does not apply to number fields (they take min, max, integer)',
      'VALIDATION_ERROR formSets[2].fields.a.limits: min (5) must not be greater than max (1)',
      'VALIDATION_ERROR formSets[2].slug: "dup" is the slug of more than one form set in the blueprint',
      'VALIDATION_ERROR formSets[3].fields[0].key: "a" is the key of more than one field; field keys must be unique',
      'VALIDATION_ERROR formSets[3].slug: "dup" is the slug of more than one form set in the blueprint',
      'VALIDATION_ERROR masters[0].records.b.labels.EN: is not a locale code (a language tag such as en, ja or pt-BR)',
      'VALIDATION_ERROR masters[0].key: "m" is the key of more than one master in the blueprint',
      'VALIDATION_ERROR masters[0].records: parents form a cycle: a → b → a; a record cannot be its own ancestor',
    ];
    for (const line of expected) expect(found, line).to.include(line);
    expect(plan.formSets.map((f) => f.slug)).to.deep.equal(['blog', 'Bad--slug', 'dup', 'dup']);
  });

  it('accept masterEntityKey naming a master of the project or of the blueprint, and nothing else', () => {
    const doc = minimalBlueprint();
    expect(planBlueprint({ ...doc, masters: [] }, { formSetSlugs: [], masterKeys: ['topics'] }).ok).to.equal(true);
    const plan = planBlueprint({ ...doc, masters: [] }, none);
    expect(listing(plan)).to.deep.equal(['VALIDATION_ERROR formSets.articles.fields.topic.masterEntityKey: master "topics" neither exists in this project nor is defined in the blueprint\'s masters']);
  });

  it('reuse a master whose key exists, with a warning, and create nothing for it', () => {
    const plan = planBlueprint(minimalBlueprint(), { formSetSlugs: [], masterKeys: ['topics'] });
    expect(plan.ok).to.equal(true);
    expect(plan.masters[0]).to.deep.include({ key: 'topics', action: 'reuse', records: null });
    expect(plan.warnings[0]).to.match(/master "topics" already exists/);
    const commands = blueprintCommands(plan, { projectId: PROJECT_ID, newId: ids() });
    expect(commands.masters).to.deep.equal([]);
    expect(commands.formSets).to.have.length(1);
  });

  it('report a slug clash as CONFLICT (and a mix of problems as VALIDATION_ERROR)', () => {
    const clash = planBlueprint(minimalBlueprint(), { formSetSlugs: ['articles'], masterKeys: [] });
    expect(listing(clash)).to.deep.equal(['CONFLICT formSets.articles.slug: a form set with slug "articles" already exists in this project']);
    expectDomainError(() => assertPlanApplicable(clash), 'CONFLICT', /^The blueprint cannot be applied: formSets\.articles\.slug: a form set with slug "articles" already exists/);
    const doc = minimalBlueprint();
    doc.formSets[0]!.fields[0]!.type = 'nope';
    expectDomainError(() => assertPlanApplicable(planBlueprint(doc, { formSetSlugs: ['articles'], masterKeys: [] })), 'VALIDATION_ERROR', /formSets\.articles\.slug.*already exists/);
  });

  it('refuse documents that are not blueprints', () => {
    for (const document of [null, [], 'x', {}]) {
      const plan = planBlueprint(document, none);
      expect(plan.ok).to.equal(false);
      expect(plan.problems.length).to.be.greaterThan(0);
    }
    expect(formBlueprintSchemaProblems({}).map((p) => `${p.path}: ${p.message}`)).to.deep.equal(['formSets: is required']);
  });

  it('turn a plan into create commands the deciders accept', () => {
    const plan = planBlueprint(minimalBlueprint(), none);
    const commands = blueprintCommands(plan, { projectId: PROJECT_ID, newId: ids() });
    expect(commands.masters.map((c) => c.masterId)).to.deep.equal(['00000000-0000-4000-8000-000000000001']);
    expect(commands.formSets[0]!.definition.id).to.equal('00000000-0000-4000-8000-000000000002');
    for (const command of commands.masters) {
      const [event] = masterDecider.decide(command, fold(masterDecider, []), { principal: fullKey, now: '2026-05-01T00:00:00.000Z' });
      expect(event!.type).to.equal('master.created');
    }
    for (const command of commands.formSets) {
      const [event] = formSetDecider.decide(command, fold(formSetDecider, []), { principal: fullKey });
      expect(event!.type).to.equal('form-set.created');
    }
    expectDomainError(() => blueprintCommands(planBlueprint({}, none), { projectId: PROJECT_ID, newId: ids() }), 'VALIDATION_ERROR');
  });

  it('may be applied by full and schema agent keys and a tenant_admin only', () => {
    for (const principal of [fullKey, schemaKey, tenantAdmin]) {
      assertMayApplyBlueprint(principal);
      assertMayApplyMasterBlueprint(principal);
    }
    expectDomainError(() => assertMayApplyBlueprint(contentKey), 'FORBIDDEN', /content-scope agent key may read the schema but not apply blueprints or templates/);
    expectDomainError(() => assertMayApplyMasterBlueprint(contentKey), 'FORBIDDEN', /content-scope agent key/);
    expectDomainError(() => assertMayApplyBlueprint(tenantUser), 'FORBIDDEN', /Only a tenant_admin may apply blueprints or templates/);
  });
});

describe('master blueprints', () => {
  it('plan the masters to create', () => {
    const plan = planMasterBlueprint({ masters: minimalBlueprint().masters }, { masterKeys: [] });
    expect(plan.ok).to.equal(true);
    expect(plan.masters[0]).to.deep.include({ key: 'topics', action: 'create', recordCount: 2 });
    const commands = blueprintCommands(plan, { projectId: PROJECT_ID, newId: ids() });
    expect(commands.masters[0]).to.deep.include({ type: 'create_master', key: 'topics', projectId: PROJECT_ID });
    expect(commands.formSets).to.deep.equal([]);
  });

  it('report every problem: an existing key is a conflict, cycles, bad records, schema problems', () => {
    const plan = planMasterBlueprint(
      {
        masters: [
          { key: 'topics', name: 'Topics' },
          { key: 'tree', name: 'Tree', records: [{ value: 'a', labels: { en: 'A' }, parent: 'a' }, { value: 'b', labels: { en: 'B' }, parent: 'c' }, { value: 'c', labels: { en: 'C' }, parent: 'b' }] },
          { key: 'Bad', name: 'Bad', records: [{ value: 'x', labels: {} }, { value: 'y', labels: { en: 'Y' }, parent: 5 }] },
        ],
      },
      { masterKeys: ['topics'] },
    );
    expect(plan.ok).to.equal(false);
    const found = listing(plan);
    for (const line of [
      'CONFLICT masters.topics.key: a master with key "topics" already exists in this project',
      'VALIDATION_ERROR masters.tree.records.a.parent: a record cannot be its own parent',
      'VALIDATION_ERROR masters.tree.records: parents form a cycle: b → c → b; a record cannot be its own ancestor',
      'VALIDATION_ERROR masters[2].key: must be a lowercase letter followed by lowercase letters, digits, underscores or hyphens, at most 64 characters',
      'VALIDATION_ERROR masters[2].records.x.labels: must have at least one entry',
      'VALIDATION_ERROR masters[2].records.y.parent: must be the value of another record, or null',
    ]) {
      expect(found, line).to.include(line);
    }
    expect(planMasterBlueprint({ masters: [] }, { masterKeys: [] }).problems.map((p) => `${p.path}: ${p.message}`)).to.deep.equal(['masters: must have at least one item']);
  });
});

function ids(): () => string {
  let n = 0;
  return () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
}
