import type { Decider, DomainEvent } from '../../../../src/domain/decider.ts';
import type { Principal } from '../../../../src/domain/principal.ts';
import { EventCatalog } from '../../../../src/event-store/event-catalog.ts';
import { formSetEvents } from '../../../../src/domain/content/form-set/form-set-events.ts';
import { masterEvents } from '../../../../src/domain/content/master/master-events.ts';
import { specify } from '../../../support/decider-spec.ts';

export const PROJECT_ID = '0b6f3c39-5a7e-4a51-9a3c-3f1f6a2b7c01';
export const OTHER_PROJECT_ID = '7d2e4c10-1b3a-4f9e-8c55-2a0b9e6d4f02';
export const FORM_SET_ID = '3f8a2b6c-9d14-4e7f-a2c5-6b1d0e9f8a03';
export const MASTER_ID = 'c4d9e8f7-2a1b-4c3d-9e8f-7a6b5c4d3e04';
export const ASSET_ID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c05';
export const ENTRY_ID = '1a2b3c4d-5e6f-4a7b-9c8d-0e1f2a3b4c06';

export const tenantAdmin: Principal = { kind: 'user', userId: 'user-admin', tenantId: 'tenant-1', role: 'tenant_admin' };
export const tenantUser: Principal = { kind: 'user', userId: 'user-editor', tenantId: 'tenant-1', role: 'tenant_user' };
export const fullKey: Principal = { kind: 'agent', keyId: 'key-full', tenantId: 'tenant-1', projectId: PROJECT_ID, scope: 'full' };
export const schemaKey: Principal = { kind: 'agent', keyId: 'key-schema', tenantId: 'tenant-1', projectId: PROJECT_ID, scope: 'schema' };
export const contentKey: Principal = { kind: 'agent', keyId: 'key-content', tenantId: 'tenant-1', projectId: PROJECT_ID, scope: 'content' };
export const otherProjectKey: Principal = { kind: 'agent', keyId: 'key-other', tenantId: 'tenant-2', projectId: OTHER_PROJECT_ID, scope: 'full' };
export const agentKeys = { full: fullKey, schema: schemaKey, content: contentKey } as const;

/** The form set and master events: what the log accepts of the deciders these fixtures serve. */
const catalog = new EventCatalog([...formSetEvents, ...masterEvents]);

/** The kit's decider specification (test/support/decider-spec.ts), with the form set and master catalog. */
export function given<S, C, E extends DomainEvent, Ctx>(decider: Decider<S, C, E, Ctx>, events: E[]) {
  return specify(decider, { catalog })(events);
}

export { expectDomainError } from '../../../support/decider-spec.ts';

/** A blog-like definition input used across tests. */
export function blogDefinition(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: FORM_SET_ID,
    slug: 'blog',
    name: 'Blog',
    description: null,
    blocks: [
      { id: 'content', label: 'Content', fieldKeys: ['title', 'body'] },
      { id: 'seo', label: 'SEO', fieldKeys: ['meta_description', 'og_image'] },
    ],
    fields: [
      { key: 'title', type: 'text', label: 'Title', required: true, limits: { maxLength: 120 } },
      { key: 'body', type: 'tiptap', label: 'Body' },
      { key: 'meta_description', type: 'textarea', label: 'Meta description', limits: { maxLength: 160 } },
      { key: 'og_image', type: 'image', label: 'OG image' },
      { key: 'published_date', type: 'date', label: 'Published date' },
      { key: 'category', type: 'select', label: 'Category', masterEntityKey: 'blog_category' },
    ],
    seoRoles: { title: 'title', description: 'meta_description', image: 'og_image', date: 'published_date' },
    widgetRoles: { title: 'title', thumbnail: 'og_image', category: 'category' },
    ...overrides,
  };
}
