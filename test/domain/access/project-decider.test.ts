import { expect } from 'chai';
import { fold } from '../../../src/domain/decider.ts';
import type { ProjectEvent } from '../../../src/domain/access/access-events.ts';
import { domainChanges, effectiveIpAllowlist, loginBranding, projectDecider, type ProjectContext } from '../../../src/domain/access/project-decider.ts';
import type { Plan } from '../../../src/domain/plans.ts';
import { admin, agent, editor, foreignAdmin, operator, OTHER_PROJECT, PROJECT, TENANT, given } from './support.ts';

const ENTRY_1 = 'e1111111-1111-4111-8111-111111111111';
const ENTRY_2 = 'e2222222-2222-4222-8222-222222222222';

const created = (plan: Plan = 'free'): ProjectEvent => ({
  type: 'project.created',
  data: { projectId: PROJECT, tenantId: TENANT, name: 'Acme site', slug: 'acme', plan, contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' } },
});
const as = (caller: ProjectContext['caller'], clientIp?: string): ProjectContext => (clientIp ? { caller, clientIp } : { caller });
const project = (...more: ProjectEvent[]) => given(projectDecider, [created(), ...more]);
const businessProject = (...more: ProjectEvent[]) => given(projectDecider, [created('business'), ...more]);

describe('project decider', () => {
  describe('create', () => {
    const command = { type: 'create-project' as const, projectId: PROJECT, tenantId: TENANT, name: ' Acme site ', slug: 'acme', plan: 'free' as const, contentLocales: { locales: ['EN', 'ja'], defaultLocale: 'en' } };

    it('creates a project for an operator or the tenant admin, canonicalising values', () => {
      for (const caller of [operator, admin]) given(projectDecider, []).when(command, as(caller)).then([created()]);
    });

    it('defaults content locales to en', () => {
      const [event] = given(projectDecider, []).when({ ...command, contentLocales: undefined }, as(operator)).events();
      expect(event!.data).to.deep.include({ contentLocales: { locales: ['en'], defaultLocale: 'en' } });
    });

    it('hides other tenants and refuses users and keys without the right', () => {
      given(projectDecider, []).when(command, as(foreignAdmin)).thenFails('NOT_FOUND');
      given(projectDecider, []).when(command, as(editor)).thenFails('FORBIDDEN', /tenant_admin/);
      given(projectDecider, []).when(command, as(agent('full'))).thenFails('FORBIDDEN');
    });

    it('refuses a second creation, a bad slug, a bad plan and a default outside the locales', () => {
      project().when(command, as(operator)).thenFails('CONFLICT');
      for (const slug of ['Acme', '-acme', 'acme-', 'ac me', '', 'a'.repeat(64)]) {
        given(projectDecider, []).when({ ...command, slug }, as(operator)).thenFails('VALIDATION_ERROR', /slug/);
      }
      given(projectDecider, []).when({ ...command, plan: 'gold' as Plan }, as(operator)).thenFails('VALIDATION_ERROR', /plan must be one of free, solo/);
      given(projectDecider, []).when({ ...command, contentLocales: { locales: ['en'], defaultLocale: 'fr' } }, as(operator)).thenFails('VALIDATION_ERROR', /defaultLocale/);
      given(projectDecider, []).when({ ...command, name: '   ' }, as(operator)).thenFails('VALIDATION_ERROR', /name must not be empty/);
    });
  });

  it('answers NOT_FOUND for a project that does not exist, or that the caller cannot see', () => {
    given(projectDecider, []).when({ type: 'rename-project', name: 'x' }, as(operator)).thenFails('NOT_FOUND');
    project().when({ type: 'rename-project', name: 'x' }, as(foreignAdmin)).thenFails('NOT_FOUND');
    project().when({ type: 'update-login-appearance', message: 'hi' }, as(agent('full', OTHER_PROJECT))).thenFails('NOT_FOUND');
  });

  it('renames, and does nothing when the name is unchanged', () => {
    project().when({ type: 'rename-project', name: 'New name' }, as(admin)).then([{ type: 'project.renamed', data: { projectId: PROJECT, name: 'New name' } }]);
    project().when({ type: 'rename-project', name: 'Acme site ' }, as(admin)).then([]);
  });

  describe('plan', () => {
    it('is changed by an operator or a tenant admin', () => {
      for (const caller of [operator, admin]) {
        project().when({ type: 'change-plan', plan: 'business' }, as(caller)).then([{ type: 'project.plan-changed', data: { projectId: PROJECT, plan: 'business', previousPlan: 'free' } }]);
      }
      project().when({ type: 'change-plan', plan: 'free' }, as(admin)).then([]);
    });

    it('is refused to tenant users and to every agent key', () => {
      project().when({ type: 'change-plan', plan: 'business' }, as(editor)).thenFails('FORBIDDEN', /tenant_admin/);
      for (const scope of ['full', 'schema', 'content'] as const) {
        project().when({ type: 'change-plan', plan: 'business' }, as(agent(scope))).thenFails('FORBIDDEN', /Agent keys can never change billing or social settings/);
      }
    });
  });

  describe('content locales', () => {
    const changed = (locales: string[], defaultLocale: string): ProjectEvent => ({ type: 'project.content-locales-changed', data: { projectId: PROJECT, locales, defaultLocale } });

    it('are patched by a tenant admin, canonicalised', () => {
      project().when({ type: 'patch-content-locales', locales: ['en', 'ja', 'PT-br', 'zh-hant-tw'] }, as(admin)).then([changed(['en', 'ja', 'pt-BR', 'zh-Hant-TW'], 'en')]);
      project().when({ type: 'patch-content-locales', defaultLocale: 'ja' }, as(admin)).then([changed(['en', 'ja'], 'ja')]);
    });

    it('require a user session: every agent key is FORBIDDEN', () => {
      for (const scope of ['full', 'schema', 'content'] as const) {
        project().when({ type: 'patch-content-locales', locales: ['en'] }, as(agent(scope))).thenFails('FORBIDDEN', /a user session is required/);
      }
    });

    it('require the tenant_admin role', () => {
      project().when({ type: 'patch-content-locales', locales: ['en'] }, as(editor)).thenFails('FORBIDDEN', /Only a tenant_admin can patch content locales/);
    });

    it('refuse removing the default locale, unless the same patch names a new default', () => {
      const error = project().when({ type: 'patch-content-locales', locales: ['ja'] }, as(admin)).thenFails('VALIDATION_ERROR', /en cannot be removed because it is the default locale/);
      expect(error.hint).to.match(/defaultLocale/);
      project().when({ type: 'patch-content-locales', locales: ['ja'], defaultLocale: 'ja' }, as(admin)).then([changed(['ja'], 'ja')]);
    });

    it('refuse a default that is not a content locale, duplicates, bad tags and empty patches', () => {
      project().when({ type: 'patch-content-locales', defaultLocale: 'fr' }, as(admin)).thenFails('VALIDATION_ERROR', /fr is not one of the content locales/);
      project().when({ type: 'patch-content-locales', locales: ['en', 'EN'] }, as(admin)).thenFails('VALIDATION_ERROR', /en is listed twice/);
      project().when({ type: 'patch-content-locales', locales: [] }, as(admin)).thenFails('VALIDATION_ERROR', /at least one/);
      for (const tag of ['english', 'x-private', 'en_US', '', '12', 'en-u-ca-gregory', 'de-x-private']) {
        project().when({ type: 'patch-content-locales', locales: ['en', tag] }, as(admin)).thenFails('VALIDATION_ERROR', /locales/);
      }
      project().when({ type: 'patch-content-locales' }, as(admin)).thenFails('VALIDATION_ERROR', /locales, defaultLocale or both/);
    });

    it('change nothing when the patch matches the current value', () => {
      project().when({ type: 'patch-content-locales', locales: ['EN', 'ja'], defaultLocale: 'en' }, as(admin)).then([]);
    });
  });

  describe('custom domains', () => {
    it('are normalised host names', () => {
      project()
        .when({ type: 'set-custom-domains', domains: ['WWW.Example.com', 'blog.example.com.', 'bücher.example'] }, as(admin))
        .then([{ type: 'project.domains-changed', data: { projectId: PROJECT, domains: ['www.example.com', 'blog.example.com', 'xn--bcher-kva.example'] } }]);
    });

    it('are unique within the project', () => {
      project().when({ type: 'set-custom-domains', domains: ['www.example.com', 'WWW.EXAMPLE.COM'] }, as(admin)).thenFails('VALIDATION_ERROR', /www.example.com is listed twice/);
    });

    it('refuse URLs, ports, wildcards, addresses and single labels', () => {
      for (const domain of ['https://www.example.com', 'www.example.com:8080', 'www.example.com/path', '*.example.com', '203.0.113.5', 'localhost', '-bad.example.com', 'a..example.com', '']) {
        project().when({ type: 'set-custom-domains', domains: [domain] }, as(admin)).thenFails('VALIDATION_ERROR', /customDomains/);
      }
    });

    it('tells the application which domains to reserve and release', () => {
      expect(domainChanges(['a.example', 'b.example'], ['b.example', 'c.example'])).to.deep.equal({ added: ['c.example'], removed: ['a.example'] });
    });

    it('are project settings: no agent key may change them', () => {
      project().when({ type: 'set-custom-domains', domains: ['www.example.com'] }, as(agent('full'))).thenFails('FORBIDDEN');
      project().when({ type: 'set-custom-domains', domains: ['www.example.com'] }, as(editor)).thenFails('FORBIDDEN');
    });
  });

  describe('site settings', () => {
    it('take an https site URL (stored without trailing slash), a name and a description, as a patch', () => {
      const [event] = project().when({ type: 'update-site-settings', siteUrl: 'https://WWW.Example.com/blog/', siteName: ' Acme ' }, as(admin)).events();
      expect(event).to.deep.equal({ type: 'project.site-settings-changed', data: { projectId: PROJECT, siteUrl: 'https://www.example.com/blog', siteName: 'Acme', description: null } });
      project(event!).when({ type: 'update-site-settings', description: 'All about Acme' }, as(admin)).then([
        { type: 'project.site-settings-changed', data: { projectId: PROJECT, siteUrl: 'https://www.example.com/blog', siteName: 'Acme', description: 'All about Acme' } },
      ]);
      project(event!).when({ type: 'update-site-settings', siteUrl: 'https://www.example.com/blog/' }, as(admin)).then([]);
      project(event!).when({ type: 'update-site-settings', siteUrl: null }, as(admin)).then([
        { type: 'project.site-settings-changed', data: { projectId: PROJECT, siteUrl: null, siteName: 'Acme', description: null } },
      ]);
    });

    it('refuse http, credentials, queries and non-URLs', () => {
      for (const siteUrl of ['http://www.example.com', 'https://user:pw@www.example.com', 'https://www.example.com/?a=1', 'https://www.example.com/#top', 'www.example.com', 'ftp://x.example']) {
        project().when({ type: 'update-site-settings', siteUrl }, as(admin)).thenFails('VALIDATION_ERROR', /siteUrl/);
      }
    });
  });

  describe('login appearance', () => {
    it('is patched and readable as public branding', () => {
      const [event] = project()
        .when({ type: 'update-login-appearance', logoUrl: 'https://cdn.example.com/logo.png?v=2', primaryColor: '#1A73E8', accentColor: '#fff', message: ' Welcome back ' }, as(admin))
        .events();
      expect(event).to.deep.equal({
        type: 'project.login-appearance-changed',
        data: { projectId: PROJECT, logoUrl: 'https://cdn.example.com/logo.png?v=2', primaryColor: '#1a73e8', accentColor: '#fff', message: 'Welcome back' },
      });
      const state = fold(projectDecider, [created(), event!])!;
      expect(loginBranding(state)).to.deep.equal({
        projectId: PROJECT,
        projectName: 'Acme site',
        logoUrl: 'https://cdn.example.com/logo.png?v=2',
        primaryColor: '#1a73e8',
        accentColor: '#fff',
        message: 'Welcome back',
      });
      project(event!).when({ type: 'update-login-appearance', accentColor: null }, as(admin)).then([
        { type: 'project.login-appearance-changed', data: { projectId: PROJECT, logoUrl: 'https://cdn.example.com/logo.png?v=2', primaryColor: '#1a73e8', accentColor: null, message: 'Welcome back' } },
      ]);
    });

    it('refuses bad colours, http logos and long messages', () => {
      project().when({ type: 'update-login-appearance', primaryColor: 'blue' }, as(admin)).thenFails('VALIDATION_ERROR', /primaryColor/);
      project().when({ type: 'update-login-appearance', logoUrl: 'http://cdn.example.com/logo.png' }, as(admin)).thenFails('VALIDATION_ERROR', /logoUrl must use https/);
      project().when({ type: 'update-login-appearance', message: 'x'.repeat(501) }, as(admin)).thenFails('VALIDATION_ERROR', /message/);
    });

    it('may be updated by a full-scope key (an MCP tool), not by a content-scope key', () => {
      expect(project().when({ type: 'update-login-appearance', message: 'Hi' }, as(agent('full'))).events()).to.have.length(1);
      project().when({ type: 'update-login-appearance', message: 'Hi' }, as(agent('content'))).thenFails('FORBIDDEN');
    });
  });

  describe('console IP allowlist', () => {
    const add = (entryId: string, cidr: string, label?: string) => ({ type: 'add-ip-allowlist-entry' as const, entryId, cidr, label });
    const added = (entryId: string, cidr: string, label = ''): ProjectEvent => ({ type: 'project.ip-allowlist-entry-added', data: { projectId: PROJECT, entryId, cidr, label } });

    it('requires the Business plan or above to add entries', () => {
      for (const plan of ['free', 'solo', 'standard'] as const) {
        const error = given(projectDecider, [created(plan)]).when(add(ENTRY_1, '203.0.113.0/24'), as(admin)).thenFails('PLAN_REQUIRED', /requires the Business plan or above/);
        expect(error.hint).to.match(/Upgrade/);
      }
      for (const plan of ['business', 'enterprise'] as const) {
        given(projectDecider, [created(plan)]).when(add(ENTRY_1, '203.0.113.7/24', ' Office '), as(admin)).then([added(ENTRY_1, '203.0.113.0/24', 'Office')]);
      }
    });

    it('stores canonical ranges and refuses malformed or duplicate ones', () => {
      businessProject().when(add(ENTRY_1, '2001:DB8::/32'), as(admin)).then([added(ENTRY_1, '2001:db8::/32')]);
      businessProject().when(add(ENTRY_1, '::ffff:203.0.113.0/120'), as(admin)).then([added(ENTRY_1, '203.0.113.0/24')]);
      businessProject().when(add(ENTRY_1, '203.0.113.0/33'), as(admin)).thenFails('VALIDATION_ERROR', /cidr: prefix length/);
      businessProject().when(add(ENTRY_1, 'office'), as(admin)).thenFails('VALIDATION_ERROR', /cidr/);
      businessProject(added(ENTRY_1, '203.0.113.0/24')).when(add(ENTRY_2, '203.0.113.9/24'), as(admin)).thenFails('CONFLICT', /already in the console IP allowlist/);
      businessProject(added(ENTRY_1, '203.0.113.0/24')).when(add(ENTRY_1, '198.51.100.0/24'), as(admin)).thenFails('CONFLICT');
    });

    it('removes entries on any plan, so a downgraded project can clear its list', () => {
      const history = [created('business'), added(ENTRY_1, '203.0.113.0/24'), { type: 'project.plan-changed', data: { projectId: PROJECT, plan: 'standard', previousPlan: 'business' } } as ProjectEvent];
      given(projectDecider, history).when({ type: 'remove-ip-allowlist-entry', entryId: ENTRY_1 }, as(admin)).then([{ type: 'project.ip-allowlist-entry-removed', data: { projectId: PROJECT, entryId: ENTRY_1 } }]);
      given(projectDecider, history).when({ type: 'remove-ip-allowlist-entry', entryId: ENTRY_2 }, as(admin)).thenFails('NOT_FOUND');
    });

    it('is enforced only on Business and above', () => {
      const business = fold(projectDecider, [created('business'), added(ENTRY_1, '203.0.113.0/24')])!;
      expect(effectiveIpAllowlist(business)).to.deep.equal([{ id: ENTRY_1, cidr: '203.0.113.0/24', label: '' }]);
      expect(effectiveIpAllowlist({ ...business, plan: 'standard' })).to.deep.equal([]);
    });

    it('will not let a console user lock out their own address', () => {
      businessProject().when(add(ENTRY_1, '203.0.113.0/24'), as(admin, '198.51.100.20')).thenFails('VALIDATION_ERROR', /block your own address/);
      businessProject().when(add(ENTRY_1, '198.51.100.0/24'), as(admin, '::ffff:198.51.100.20')).then([added(ENTRY_1, '198.51.100.0/24')]);
      businessProject(added(ENTRY_1, '198.51.100.0/24'), added(ENTRY_2, '203.0.113.0/24'))
        .when({ type: 'remove-ip-allowlist-entry', entryId: ENTRY_1 }, as(admin, '198.51.100.20'))
        .thenFails('VALIDATION_ERROR', /block your own address/);
      // removing the last entry opens the console to everyone, which cannot lock anybody out
      businessProject(added(ENTRY_1, '198.51.100.0/24'))
        .when({ type: 'remove-ip-allowlist-entry', entryId: ENTRY_1 }, as(admin, '203.0.113.1'))
        .then([{ type: 'project.ip-allowlist-entry-removed', data: { projectId: PROJECT, entryId: ENTRY_1 } }]);
    });

    it('is managed by tenant admins and full-scope keys only', () => {
      businessProject().when(add(ENTRY_1, '203.0.113.0/24'), as(editor)).thenFails('FORBIDDEN');
      businessProject().when(add(ENTRY_1, '203.0.113.0/24'), as(agent('content'))).thenFails('FORBIDDEN');
      expect(businessProject().when(add(ENTRY_1, '203.0.113.0/24'), as(agent('full'))).events()).to.have.length(1);
    });
  });
});
