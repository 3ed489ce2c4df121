import { expect } from 'chai';
import { EventCatalog } from '../../../../src/event-store/event-catalog.ts';
import { fold } from '../../../../src/domain/decider.ts';
import { formSetDecider, type FormSetCommand } from '../../../../src/domain/content/form-set/form-set-decider.ts';
import { formSetEvents, formSetStreamId, type FormSetEvent } from '../../../../src/domain/content/form-set/form-set-events.ts';
import { validateFormSetDefinition, type FormSetDefinition } from '../../../../src/domain/content/form-set/form-set-definition.ts';
import type { Principal } from '../../../../src/domain/principal.ts';
import { FORM_SET_ID, PROJECT_ID, agentKeys, blogDefinition, contentKey, fullKey, given, otherProjectKey, schemaKey, tenantAdmin, tenantUser } from './fixtures.ts';

const definition = validateFormSetDefinition(blogDefinition());
const created: FormSetEvent = { type: 'form-set.created', data: { projectId: PROJECT_ID, version: 1, definition } };
const deleted: FormSetEvent = { type: 'form-set.deleted', data: { projectId: PROJECT_ID, formSetId: FORM_SET_ID, slug: 'blog' } };
const catalog = new EventCatalog(formSetEvents);

const withExtraField = (d: FormSetDefinition): FormSetDefinition => ({ ...d, fields: [...d.fields, { key: 'author', type: 'text', label: 'Author', required: false, locale_shared: true }] });
const withoutField = (d: FormSetDefinition, key: string): FormSetDefinition => ({
  ...d,
  fields: d.fields.filter((f) => f.key !== key),
  blocks: d.blocks.map((b) => ({ ...b, fieldKeys: b.fieldKeys.filter((k) => k !== key) })),
});
const withoutBlock = (d: FormSetDefinition, id: string): FormSetDefinition => ({ ...d, blocks: d.blocks.filter((b) => b.id !== id) });

function decide(events: FormSetEvent[], command: FormSetCommand, principal: Principal) {
  return given(formSetDecider, events).when(command, { principal });
}

const AGENT_DELETE = /^Agent keys may never delete form sets, blocks or field definitions/;

describe('form set decider', () => {
  it('streams are named form-set-<id>', () => {
    expect(formSetStreamId(FORM_SET_ID)).to.equal(`form-set-${FORM_SET_ID}`);
  });

  describe('create_form_set', () => {
    const create: FormSetCommand = { type: 'create_form_set', projectId: PROJECT_ID, definition: blogDefinition() };

    for (const [who, principal] of [['a tenant_admin', tenantAdmin], ['a full agent key', fullKey], ['a schema agent key', schemaKey]] as const) {
      it(`creates the form set for ${who}, at version 1`, () => {
        decide([], create, principal).then([created]);
      });
    }

    it('refuses a content-scope agent key: it may read the schema but not change it', () => {
      decide([], create, contentKey).thenFails('FORBIDDEN', /content-scope agent key may read the schema but not create form sets/);
    });

    it('refuses a tenant_user', () => {
      decide([], create, tenantUser).thenFails('FORBIDDEN', /Only a tenant_admin may create form sets/);
    });

    it("refuses an agent key of another project", () => {
      decide([], create, otherProjectKey).thenFails('FORBIDDEN', /only in the project that issued it/);
    });

    it('refuses an invalid definition, naming every problem', () => {
      const bad = blogDefinition({ slug: 'Bad', fields: [{ key: 'c', type: 'select', label: 'C' }], blocks: [], seoRoles: {}, widgetRoles: {} });
      const error = decide([], { ...create, definition: bad }, tenantAdmin).thenFails('VALIDATION_ERROR');
      expect(error.message).to.match(/^Invalid form set definition: slug: .*; fields\.c\.masterEntityKey: is required for select fields/);
    });

    it('refuses to create twice', () => {
      decide([created], create, tenantAdmin).thenFails('CONFLICT');
    });
  });

  describe('update_form_set', () => {
    it('adds a field for a full or schema agent key, with the next version', () => {
      for (const principal of [fullKey, schemaKey, tenantAdmin]) {
        decide([created], { type: 'update_form_set', definition: withExtraField(definition) }, principal).then([
          { type: 'form-set.updated', data: { projectId: PROJECT_ID, version: 2, definition: withExtraField(definition), removedFieldKeys: [], removedBlockIds: [] } },
        ]);
      }
    });

    it('takes the id from the form set when the definition leaves it out', () => {
      const { id: _id, ...withoutId } = withExtraField(definition);
      const [event] = decide([created], { type: 'update_form_set', definition: withoutId }, tenantAdmin).events();
      expect(event!.data).to.deep.include({ version: 2 });
    });

    it('refuses a change that would leave the values entries hold unreadable, naming each field, and takes the compatible ones', () => {
      const changed = (key: string, patch: Record<string, unknown>): FormSetDefinition => ({ ...definition, fields: definition.fields.map((f) => (f.key === key ? ({ ...f, ...patch } as typeof f) : f)) });
      const withAuthor: FormSetEvent = { type: 'form-set.updated', data: { projectId: PROJECT_ID, version: 2, definition: withExtraField(definition), removedFieldKeys: [], removedBlockIds: [] } };
      const authorAs = (patch: Record<string, unknown>): FormSetDefinition => ({ ...withExtraField(definition), fields: withExtraField(definition).fields.map((f) => (f.key === 'author' ? ({ ...f, ...patch } as typeof f) : f)) });
      const error = decide([created, withAuthor], { type: 'update_form_set', definition: authorAs({ type: 'number' }) }, tenantAdmin).thenFails('VALIDATION_ERROR', /field "author": its type cannot change from text to number/);
      expect(error.hint).to.match(/new key/);
      decide([created], { type: 'update_form_set', definition: changed('title', { locale_shared: true }) }, tenantAdmin).thenFails('VALIDATION_ERROR', /field "title": locale_shared cannot change/);
      decide([created], { type: 'update_form_set', definition: changed('category', { masterEntityKey: 'other_master' }) }, tenantAdmin).thenFails('VALIDATION_ERROR', /field "category": its master cannot change from blog_category to other_master/);
      // Every problem at once.
      const both = decide([created, withAuthor], { type: 'update_form_set', definition: { ...authorAs({ type: 'boolean' }), fields: authorAs({ type: 'boolean' }).fields.map((f) => (f.key === 'body' ? { ...f, type: 'text' as const } : f)) } }, tenantAdmin).thenFails('VALIDATION_ERROR');
      expect(both.message).to.contain('field "author"').and.to.contain('field "body"');
      // One line of text and several are the same kind of value; a new field with the new type is always fine.
      expect(decide([created], { type: 'update_form_set', definition: changed('meta_description', { type: 'text' }) }, tenantAdmin).events()).to.have.length(1);
      expect(decide([created], { type: 'update_form_set', definition: changed('title', { required: false, label: 'Headline', limits: { maxLength: 200 } }) }, tenantAdmin).events()).to.have.length(1);
    });

    it('decides nothing when the definition is unchanged', () => {
      decide([created], { type: 'update_form_set', definition: blogDefinition() }, fullKey).then([]);
    });

    it('refuses a content-scope agent key', () => {
      decide([created], { type: 'update_form_set', definition: withExtraField(definition) }, contentKey).thenFails('FORBIDDEN', /content-scope agent key may read the schema but not change form sets/);
    });

    it('refuses a tenant_user', () => {
      decide([created], { type: 'update_form_set', definition: withExtraField(definition) }, tenantUser).thenFails('FORBIDDEN');
    });

    for (const [scope, principal] of Object.entries(agentKeys)) {
      it(`treats an update removing a field as a deletion: refused to a ${scope} agent key`, () => {
        const error = decide([created], { type: 'update_form_set', definition: withoutField(definition, 'body') }, principal).thenFails('FORBIDDEN');
        if (scope !== 'content') expect(error.message).to.match(AGENT_DELETE).and.to.contain('field "body"');
      });
      it(`treats an update removing a block as a deletion: refused to a ${scope} agent key`, () => {
        const error = decide([created], { type: 'update_form_set', definition: withoutBlock(definition, 'seo') }, principal).thenFails('FORBIDDEN');
        if (scope !== 'content') expect(error.message).to.match(AGENT_DELETE).and.to.contain('block "seo"');
      });
    }

    it('lets a tenant_admin remove fields and blocks by update, naming them in the event', () => {
      const after = withoutBlock(withoutField(definition, 'body'), 'seo');
      decide([created], { type: 'update_form_set', definition: after }, tenantAdmin).then([
        { type: 'form-set.updated', data: { projectId: PROJECT_ID, version: 2, definition: after, removedFieldKeys: ['body'], removedBlockIds: ['seo'] } },
      ]);
    });

    it('refuses to change the id', () => {
      decide([created], { type: 'update_form_set', definition: { ...definition, id: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a80' } }, tenantAdmin).thenFails('VALIDATION_ERROR', /id: cannot change/);
    });

    it('refuses an invalid definition, naming the problem', () => {
      decide([created], { type: 'update_form_set', definition: { ...definition, seoRoles: { image: 'title' } } }, tenantAdmin).thenFails('VALIDATION_ERROR', /seoRoles\.image: field "title" is a text field/);
    });

    it('refuses a stale expected version', () => {
      const updated: FormSetEvent = { type: 'form-set.updated', data: { projectId: PROJECT_ID, version: 2, definition: withExtraField(definition), removedFieldKeys: [], removedBlockIds: [] } };
      decide([created, updated], { type: 'update_form_set', definition, expectedVersion: 1 }, tenantAdmin).thenFails('CONFLICT', /version 2, not 1/);
    });
  });

  describe('remove_field_definition and remove_form_block', () => {
    for (const [scope, principal] of Object.entries(agentKeys)) {
      it(`refuse a ${scope} agent key: agent keys may never delete fields or blocks`, () => {
        decide([created], { type: 'remove_field_definition', fieldKey: 'title' }, principal).thenFails('FORBIDDEN', AGENT_DELETE);
        decide([created], { type: 'remove_form_block', blockId: 'seo' }, principal).thenFails('FORBIDDEN', AGENT_DELETE);
      });
    }

    it('refuse a tenant_user', () => {
      decide([created], { type: 'remove_field_definition', fieldKey: 'title' }, tenantUser).thenFails('FORBIDDEN', /Only a tenant_admin may delete form sets, blocks or field definitions/);
      decide([created], { type: 'remove_form_block', blockId: 'seo' }, tenantUser).thenFails('FORBIDDEN', /Only a tenant_admin/);
    });

    it('remove a field for a tenant_admin, taking it out of its block and its roles', () => {
      const [event] = decide([created], { type: 'remove_field_definition', fieldKey: 'title' }, tenantAdmin).events();
      expect(event!.type).to.equal('form-set.updated');
      const data = event!.data as Extract<FormSetEvent, { type: 'form-set.updated' }>['data'];
      expect(data.removedFieldKeys).to.deep.equal(['title']);
      expect(data.definition.fields.map((f) => f.key)).to.not.include('title');
      expect(data.definition.blocks[0]!.fieldKeys).to.deep.equal(['body']);
      expect(data.definition.seoRoles).to.not.have.property('title');
      expect(data.definition.widgetRoles).to.not.have.property('title');
    });

    it('remove a block for a tenant_admin, leaving its fields in place', () => {
      const [event] = decide([created], { type: 'remove_form_block', blockId: 'seo' }, tenantAdmin).events();
      const data = event!.data as Extract<FormSetEvent, { type: 'form-set.updated' }>['data'];
      expect(data.removedBlockIds).to.deep.equal(['seo']);
      expect(data.removedFieldKeys).to.deep.equal([]);
      expect(data.definition.fields).to.have.length(definition.fields.length);
    });

    it('report a field or block that does not exist', () => {
      decide([created], { type: 'remove_field_definition', fieldKey: 'nope' }, tenantAdmin).thenFails('NOT_FOUND', /no field "nope"/);
      decide([created], { type: 'remove_form_block', blockId: 'nope' }, tenantAdmin).thenFails('NOT_FOUND', /no block "nope"/);
    });
  });

  describe('delete_form_set', () => {
    it('deletes for a tenant_admin', () => {
      decide([created], { type: 'delete_form_set' }, tenantAdmin).then([deleted]);
    });

    for (const [scope, principal] of Object.entries(agentKeys)) {
      it(`refuses a ${scope} agent key: agent keys may never delete form sets`, () => {
        decide([created], { type: 'delete_form_set' }, principal).thenFails('FORBIDDEN', AGENT_DELETE);
      });
    }

    it('refuses a tenant_user', () => {
      decide([created], { type: 'delete_form_set' }, tenantUser).thenFails('FORBIDDEN', /Only a tenant_admin/);
    });

    it('leaves nothing to change afterwards', () => {
      decide([created, deleted], { type: 'update_form_set', definition }, tenantAdmin).thenFails('NOT_FOUND');
      decide([created, deleted], { type: 'delete_form_set' }, tenantAdmin).thenFails('NOT_FOUND');
    });
  });

  it('reports a form set that does not exist, or belongs to another project, as not found', () => {
    decide([], { type: 'delete_form_set' }, tenantAdmin).thenFails('NOT_FOUND');
    decide([created], { type: 'update_form_set', definition: withExtraField(definition) }, otherProjectKey).thenFails('NOT_FOUND');
  });

  it('folds its history into the current definition and version', () => {
    const updated: FormSetEvent = { type: 'form-set.updated', data: { projectId: PROJECT_ID, version: 2, definition: withExtraField(definition), removedFieldKeys: [], removedBlockIds: [] } };
    const state = fold(formSetDecider, [created, updated]);
    expect(state).to.deep.equal({ status: 'active', projectId: PROJECT_ID, definition: withExtraField(definition), version: 2 });
    expect(fold(formSetDecider, [created, updated, deleted])).to.deep.include({ status: 'deleted' });
  });

  it('decides only events that the event catalog accepts', () => {
    const history: FormSetEvent[] = [];
    const run = (command: FormSetCommand) => {
      const events = formSetDecider.decide(command, fold(formSetDecider, history), { principal: tenantAdmin });
      for (const event of events) expect(catalog.validate(event.type, event.data)).to.deep.equal(event.data);
      history.push(...events);
    };
    run({ type: 'create_form_set', projectId: PROJECT_ID, definition: blogDefinition() });
    run({ type: 'update_form_set', definition: withExtraField(definition) });
    run({ type: 'remove_field_definition', fieldKey: 'author' });
    run({ type: 'remove_form_block', blockId: 'seo' });
    run({ type: 'delete_form_set' });
    expect(history.map((e) => e.type)).to.deep.equal(['form-set.created', 'form-set.updated', 'form-set.updated', 'form-set.updated', 'form-set.deleted']);
  });
});
