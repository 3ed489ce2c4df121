import { expect } from 'chai';
import { ApiRegistry } from '../../src/http/admin/api-registry.ts';
import { ACTIONS, PERMISSIONS } from '../../src/domain/access/permissions.ts';
import { adminRouter } from '../../src/http/admin/admin-router.ts';
import type { AdminDeps } from '../../src/http/admin/admin-context.ts';
import { mcpRoute } from '../../src/mcp/mcp-http-route.ts';

/** A stand-in for every dependency: any property is another stand-in, any call answers one. Routes only register. */
function standIn(): never {
  // biome-ignore lint/complexity/useArrowFunction: the Proxy's construct trap needs a constructible target, which an arrow function is not.
  const target = function () {} as unknown as object;
  const proxy: unknown = new Proxy(target, {
    get: (_t, key) => (key === 'then' ? undefined : key === Symbol.toPrimitive ? () => 0 : proxy),
    apply: () => proxy,
    construct: () => proxy as object,
  });
  return proxy as never;
}

/** Every route the admin API registers, read from the registry the admin router fills. */
function registeredRoutes(): ApiRegistry['routes'] {
  const seen: ApiRegistry['routes'] = [];
  const add = ApiRegistry.prototype.add;
  ApiRegistry.prototype.add = function (this: ApiRegistry, ...args: Parameters<typeof add>) {
    seen.push(args[1] as never);
    return add.apply(this, args);
  } as typeof add;
  try {
    adminRouter(standIn() as AdminDeps, { webhooks: standIn(), media: standIn(), contactForms: standIn(), translation: standIn(), operations: standIn(), logTree: standIn(), auditExports: standIn(), invitations: standIn(), signIn: { oidc: standIn(), box: standIn(), relyingParty: standIn(), secondFactorChecks: standIn(), secondFactor: standIn(), saml: standIn() }, mcp: mcpRoute });
  } finally {
    ApiRegistry.prototype.add = add;
  }
  return seen;
}

/**
 * Authorization in one place: every admin route declares the permission it needs in its ApiRegistry route (checked
 * there before the handler, published as x-permission), or says it is open ('none'); services check only what
 * depends on the data.
 */
describe('codebase: every admin route declares its permission', () => {
  const routes = registeredRoutes();

  it('registers the admin API (the check below has routes to look at)', () => {
    expect(routes.length).to.be.greaterThan(90);
  });

  it('declares a permission, or none explicitly, on every route', () => {
    const missing = routes.filter((route) => (route as { permission?: unknown }).permission === undefined).map((route) => `${route.method.toUpperCase()} ${route.path} (${route.operationId})`);
    expect(missing, 'routes without a declared permission').to.deep.equal([]);
  });

  it('declares only actions of the permission table', () => {
    const unknown = routes.filter((route) => route.permission !== 'none' && !(ACTIONS as readonly string[]).includes(route.permission)).map((route) => `${route.operationId}: ${route.permission}`);
    expect(unknown).to.deep.equal([]);
    for (const route of routes) if (route.permission !== 'none') expect(PERMISSIONS[route.permission], route.operationId).to.have.property('label');
  });

  it('leaves open (none) only sign-in (password, its second factor and single sign-on), the caller\'s own session, preferences and second factor, the project switcher, accepting an invitation and the MCP endpoint', () => {
    const open = routes.filter((route) => route.permission === 'none').map((route) => route.operationId).sort();
    expect(open).to.deep.equal(['acceptInvitation', 'enrolTotp', 'finishOidcSignIn', 'getLoginBranding', 'getNoticePreferences', 'getSamlServiceProviderMetadata', 'getSecondFactor', 'getSession', 'getSignInOptions', 'listProjects', 'login', 'loginPasskeyOptions', 'loginSecondFactor', 'loginTotpSetup', 'logout', 'mcp', 'oidcBackchannelLogout', 'registerPasskey', 'removePasskey', 'removeTotp', 'renewRecoveryCodes', 'samlAssertionConsumer', 'samlSingleLogout', 'setNoticePreferences', 'startOidcSignIn', 'startPasskeyRegistration', 'startSamlSignIn', 'startTotpSetup']);
  });

  it('has an action, not none, on every route that is checked by the domain', () => {
    for (const route of routes) if (route.permissionCheckedBy === 'domain') expect(route.permission, route.operationId).to.not.equal('none');
  });
});
