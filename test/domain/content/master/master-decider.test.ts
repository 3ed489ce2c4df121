import { expect } from 'chai';
import { EventCatalog } from '../../../../src/event-store/event-catalog.ts';
import { fold } from '../../../../src/domain/decider.ts';
import type { Principal } from '../../../../src/domain/principal.ts';
import { masterDecider, type MasterCommand } from '../../../../src/domain/content/master/master-decider.ts';
import { masterEvents, masterStreamId, type MasterEvent } from '../../../../src/domain/content/master/master-events.ts';
import { MASTER_ID, PROJECT_ID, agentKeys, contentKey, fullKey, given, otherProjectKey, schemaKey, tenantAdmin, tenantUser } from '../form-set/fixtures.ts';

const NOW = '2026-05-01T09:00:00.000Z';
const ids = { projectId: PROJECT_ID, masterId: MASTER_ID };
const rec = (value: string, order: number, parent: string | null = null) => ({ value, labels: { en: value.toUpperCase(), ja: `${value}-ja` }, order, parent });
const created: MasterEvent = {
  type: 'master.created',
  data: { ...ids, key: 'blog_category', name: 'Blog category', records: [rec('news', 0), rec('tips', 1), rec('tech', 0, 'tips')] },
};
const catalog = new EventCatalog(masterEvents);

function decide(events: MasterEvent[], command: MasterCommand, principal: Principal) {
  return given(masterDecider, events).when(command, { principal, now: NOW });
}
const USER_SESSION = /needs a user session \(a console JWT\); agent keys are refused/;

describe('master decider', () => {
  it('streams are named master-<id>', () => {
    expect(masterStreamId(MASTER_ID)).to.equal(`master-${MASTER_ID}`);
  });

  describe('create_master', () => {
    const create: MasterCommand = {
      type: 'create_master',
      ...ids,
      key: 'blog_category',
      name: 'Blog category',
      records: [
        { value: 'news', labels: { en: 'NEWS', ja: 'news-ja' } },
        { value: 'tips', labels: { en: 'TIPS', ja: 'tips-ja' } },
        { value: 'tech', labels: { en: 'TECH', ja: 'tech-ja' }, parent: 'tips', order: 0 },
      ],
    };

    for (const [who, principal] of [['a tenant_admin', tenantAdmin], ['a full agent key', fullKey], ['a schema agent key', schemaKey]] as const) {
      it(`creates the master with its records for ${who} (order from position, parent null by default)`, () => {
        decide([], create, principal).then([created]);
      });
    }

    it('refuses a content-scope agent key and a tenant_user', () => {
      decide([], create, contentKey).thenFails('FORBIDDEN', /content-scope agent key/);
      decide([], create, tenantUser).thenFails('FORBIDDEN', /Only a tenant_admin may create masters/);
    });

    it('refuses an invalid key and bad records, naming every problem', () => {
      const error = decide([], { ...create, key: 'Blog Category', records: [{ value: 'a', labels: {} }, { value: 'a', labels: { en: 'A' } }] }, tenantAdmin).thenFails('VALIDATION_ERROR');
      expect(error.message).to.contain('key: must be a lowercase letter');
      expect(error.message).to.contain('records[0].labels: must have a label for at least one locale');
      expect(error.message).to.contain('"a" is the value of more than one record');
    });

    it('refuses a tree with a cycle', () => {
      const cyclic: MasterCommand = {
        ...create,
        records: [
          { value: 'a', labels: { en: 'A' }, parent: 'c' },
          { value: 'b', labels: { en: 'B' }, parent: 'a' },
          { value: 'c', labels: { en: 'C' }, parent: 'b' },
        ],
      };
      decide([], cyclic, tenantAdmin).thenFails('VALIDATION_ERROR', /records: parents form a cycle: a → c → b → a/);
    });

    it('refuses to create twice', () => {
      decide([created], create, tenantAdmin).thenFails('CONFLICT');
    });
  });

  describe('create_master_record', () => {
    it('is allowed to a full or schema agent key, appending after the siblings', () => {
      for (const principal of [fullKey, schemaKey]) {
        decide([created], { type: 'create_master_record', record: { value: 'howto', labels: { en: 'How-to' } } }, principal).then([
          { type: 'master.record-added', data: { ...ids, record: { value: 'howto', labels: { en: 'How-to' }, order: 2, parent: null } } },
        ]);
      }
      decide([created], { type: 'create_master_record', record: { value: 'ai', labels: { en: 'AI' }, parent: 'tips' } }, fullKey).then([
        { type: 'master.record-added', data: { ...ids, record: { value: 'ai', labels: { en: 'AI' }, order: 1, parent: 'tips' } } },
      ]);
    });

    it('is allowed to console users of either role', () => {
      expect(decide([created], { type: 'create_master_record', record: { value: 'x', labels: { en: 'X' } } }, tenantUser).events()).to.have.length(1);
    });

    it('is refused to a content-scope agent key', () => {
      decide([created], { type: 'create_master_record', record: { value: 'x', labels: { en: 'X' } } }, contentKey).thenFails('FORBIDDEN', /content-scope agent key may read masters but not create master records/);
    });

    it('refuses a value that exists, an unknown parent and a bad value', () => {
      decide([created], { type: 'create_master_record', record: { value: 'news', labels: { en: 'N' } } }, fullKey).thenFails('CONFLICT', /already has a record with value "news"/);
      decide([created], { type: 'create_master_record', record: { value: 'x', labels: { en: 'X' }, parent: 'nope' } }, fullKey).thenFails('VALIDATION_ERROR', /record\.parent: no record has the value "nope"/);
      decide([created], { type: 'create_master_record', record: { value: 'has space', labels: { en: 'X' } } }, fullKey).thenFails('VALIDATION_ERROR', /record\.value: must be letters, digits/);
      decide([created], { type: 'create_master_record', record: { value: 'x', labels: { english: 'X' } } }, fullKey).thenFails('VALIDATION_ERROR', /record\.labels/);
    });
  });

  describe('update_master_record', () => {
    for (const [scope, principal] of Object.entries(agentKeys)) {
      it(`is refused to a ${scope} agent key: a user session is required`, () => {
        decide([created], { type: 'update_master_record', value: 'news', labels: { en: 'News' } }, principal).thenFails('FORBIDDEN', USER_SESSION);
      });
    }

    it('replaces labels, order and parent for a user', () => {
      for (const principal of [tenantAdmin, tenantUser]) {
        decide([created], { type: 'update_master_record', value: 'news', labels: { en: 'News' }, parent: 'tips', order: 5 }, principal).then([
          { type: 'master.record-updated', data: { ...ids, record: { value: 'news', labels: { en: 'News' }, order: 5, parent: 'tips' } } },
        ]);
      }
    });

    it('moves a record back to the root with parent null, and decides nothing when nothing changes', () => {
      decide([created], { type: 'update_master_record', value: 'tech', parent: null }, tenantUser).then([
        { type: 'master.record-updated', data: { ...ids, record: { ...rec('tech', 0), parent: null } } },
      ]);
      decide([created], { type: 'update_master_record', value: 'news', order: 0 }, tenantUser).then([]);
    });

    it('refuses a parent that would make a cycle, or the record itself', () => {
      decide([created], { type: 'update_master_record', value: 'tips', parent: 'tech' }, tenantAdmin).thenFails('VALIDATION_ERROR', /parents form a cycle/);
      decide([created], { type: 'update_master_record', value: 'tips', parent: 'tips' }, tenantAdmin).thenFails('VALIDATION_ERROR', /cannot be its own parent/);
    });

    it('reports an unknown record', () => {
      decide([created], { type: 'update_master_record', value: 'nope', order: 1 }, tenantAdmin).thenFails('NOT_FOUND');
    });
  });

  describe('update_master_tree', () => {
    const tree: MasterCommand = {
      type: 'update_master_tree',
      nodes: [
        { value: 'tips', parent: null },
        { value: 'tech', parent: null },
        { value: 'news', parent: 'tips' },
      ],
    };

    for (const [scope, principal] of Object.entries(agentKeys)) {
      it(`is refused to a ${scope} agent key: a user session is required`, () => {
        decide([created], tree, principal).thenFails('FORBIDDEN', USER_SESSION);
      });
    }

    it('replaces the tree for a user, keeping labels, ordering siblings by position', () => {
      decide([created], tree, tenantUser).then([
        { type: 'master.records-replaced', data: { ...ids, records: [rec('tips', 0), rec('tech', 1), rec('news', 0, 'tips')] } },
      ]);
    });

    it('refuses cycles', () => {
      const cyclic: MasterCommand = { type: 'update_master_tree', nodes: [{ value: 'news', parent: 'tech' }, { value: 'tips', parent: 'news' }, { value: 'tech', parent: 'tips' }] };
      decide([created], cyclic, tenantAdmin).thenFails('VALIDATION_ERROR', /nodes: parents form a cycle/);
    });

    it('refuses unknown, repeated and missing records, naming each', () => {
      const error = decide([created], { type: 'update_master_tree', nodes: [{ value: 'news' }, { value: 'news' }, { value: 'ghost' }] }, tenantAdmin).thenFails('VALIDATION_ERROR');
      expect(error.message).to.contain('nodes[1].value: record "news" is placed more than once');
      expect(error.message).to.contain('nodes[2].value: master "blog_category" has no record with value "ghost"');
      expect(error.message).to.contain('missing "tips", "tech"');
    });
  });

  describe('remove_master_record', () => {
    it('removes a leaf record for a tenant_admin', () => {
      decide([created], { type: 'remove_master_record', value: 'news' }, tenantAdmin).then([{ type: 'master.record-removed', data: { ...ids, value: 'news' } }]);
    });
    it('refuses a record with children', () => {
      decide([created], { type: 'remove_master_record', value: 'tips' }, tenantAdmin).thenFails('VALIDATION_ERROR', /parent of "tech"/);
    });
    it('refuses agent keys of every scope and tenant_users', () => {
      for (const principal of Object.values(agentKeys)) decide([created], { type: 'remove_master_record', value: 'news' }, principal).thenFails('FORBIDDEN', USER_SESSION);
      decide([created], { type: 'remove_master_record', value: 'news' }, tenantUser).thenFails('FORBIDDEN', /Only a tenant_admin/);
    });
  });

  describe('humanApproval: a published master is live content', () => {
    const published: MasterEvent = { type: 'master.published', data: { ...ids, key: 'blog_category', publishedAt: NOW, recordCount: 3 } };
    const human = (principal: Principal) => ({ principal, now: NOW, approvalPolicy: { humanApproval: true, fourEyes: false } });
    const record: MasterCommand = { type: 'create_master_record', record: { value: 'events', labels: { en: 'Events' } } };

    it('an agent key may not publish, unpublish, rename a published master or add records to it (403 HUMAN_APPROVAL_REQUIRED naming the setting)', () => {
      for (const [history, command] of [
        [[created], { type: 'publish_master' }],
        [[created, published], { type: 'unpublish_master' }],
        [[created, published], { type: 'rename_master', name: 'Categories' }],
        [[created, published], record],
      ] as Array<[MasterEvent[], MasterCommand]>) {
        const error = given(masterDecider, history).when(command, human(fullKey)).thenFails('HUMAN_APPROVAL_REQUIRED', /requires a person to/);
        expect(error.hint).to.contain('approvalPolicy.humanApproval');
        expect(error.subject).to.deep.equal({ masterId: MASTER_ID });
        expect(given(masterDecider, history).when(command, human(tenantAdmin)).events()).to.have.length(1);
      }
    });

    it('an unpublished master stays the agent key’s to build', () => {
      expect(given(masterDecider, [created]).when(record, human(fullKey)).events()).to.have.length(1);
      expect(given(masterDecider, [created]).when({ type: 'rename_master', name: 'Categories' }, human(fullKey)).events()).to.have.length(1);
    });
  });

  describe('publish_master and unpublish_master', () => {
    it('publishes with the time from the context and the record count', () => {
      decide([created], { type: 'publish_master' }, fullKey).then([
        { type: 'master.published', data: { ...ids, key: 'blog_category', publishedAt: NOW, recordCount: 3 } },
      ]);
    });

    it('sets sitePublishedAt, and publishes again on request (a new notice for webhooks)', () => {
      const published: MasterEvent = { type: 'master.published', data: { ...ids, key: 'blog_category', publishedAt: NOW, recordCount: 3 } };
      expect(fold(masterDecider, [created, published])).to.deep.include({ sitePublishedAt: NOW });
      expect(decide([created, published], { type: 'publish_master' }, tenantAdmin).events()).to.have.length(1);
      decide([created, published], { type: 'unpublish_master' }, tenantAdmin).then([{ type: 'master.unpublished', data: { ...ids, key: 'blog_category' } }]);
      decide([created], { type: 'unpublish_master' }, tenantAdmin).then([]);
    });

    it('refuses a content-scope agent key and a tenant_user', () => {
      decide([created], { type: 'publish_master' }, contentKey).thenFails('FORBIDDEN');
      decide([created], { type: 'publish_master' }, tenantUser).thenFails('FORBIDDEN');
    });
  });

  it('renames for a tenant_admin or full key; refuses a blank name', () => {
    decide([created], { type: 'rename_master', name: 'Categories' }, fullKey).then([{ type: 'master.renamed', data: { ...ids, name: 'Categories' } }]);
    decide([created], { type: 'rename_master', name: ' ' }, tenantAdmin).thenFails('VALIDATION_ERROR', /name: must not be empty/);
  });

  it('reports a master that does not exist or belongs to another project as not found', () => {
    decide([], { type: 'publish_master' }, tenantAdmin).thenFails('NOT_FOUND');
    decide([created], { type: 'create_master_record', record: { value: 'x', labels: { en: 'X' } } }, otherProjectKey).thenFails('NOT_FOUND');
  });

  it('folds its history into the master entity', () => {
    const history: MasterEvent[] = [];
    const run = (command: MasterCommand, principal: Principal = tenantAdmin) => {
      const events = masterDecider.decide(command, fold(masterDecider, history), { principal, now: NOW });
      for (const event of events) expect(catalog.validate(event.type, event.data)).to.deep.equal(event.data);
      history.push(...events);
    };
    run({ type: 'create_master', ...ids, key: 'colors', name: 'Colors' });
    run({ type: 'create_master_record', record: { value: 'red', labels: { en: 'Red' } } }, fullKey);
    run({ type: 'create_master_record', record: { value: 'blue', labels: { en: 'Blue' } } });
    run({ type: 'create_master_record', record: { value: 'navy', labels: { en: 'Navy' }, parent: 'blue' } });
    run({ type: 'update_master_record', value: 'red', labels: { en: 'Red', ja: '赤' } });
    run({ type: 'update_master_tree', nodes: [{ value: 'blue' }, { value: 'navy', parent: 'blue' }, { value: 'red' }] });
    run({ type: 'remove_master_record', value: 'navy' });
    run({ type: 'rename_master', name: 'Colours' });
    run({ type: 'publish_master' });
    expect(fold(masterDecider, history)).to.deep.equal({
      status: 'active',
      id: MASTER_ID,
      projectId: PROJECT_ID,
      key: 'colors',
      name: 'Colours',
      records: [
        { value: 'blue', labels: { en: 'Blue' }, order: 0, parent: null },
        { value: 'red', labels: { en: 'Red', ja: '赤' }, order: 1, parent: null },
      ],
      sitePublishedAt: NOW,
    });
  });
});
