import type { Router } from '@koa/router';
import { z } from 'zod';
import { newRouter } from '../router.ts';
import { wrote, type ApiRegistry } from './api-registry.ts';
import { actingProject, idempotencyKeyOf, principalOf, type AdminDeps } from './admin-context.ts';
import { notFound } from '../errors/error-factory.ts';
import { idempotentCreate } from './idempotent-create.ts';
import { CAPABILITIES, CAPABILITY_LABELS, FORM_SET_CAPABILITIES, TENANT_ADMIN_GRANTS, TENANT_USER_GRANTS } from '../../domain/capabilities.ts';
import { MAX_ROLE_FORM_SETS, ROLE_DESCRIPTION_MAX_LENGTH, ROLE_NAME_MAX_LENGTH, type CustomRole } from '../../domain/access/custom-roles.ts';
import { accessQueries } from '../../../projections/access-queries.ts';
import { isUuid } from '../../event-store/position.ts';


const roleBody = z.object({
  name: z.string().min(1).max(ROLE_NAME_MAX_LENGTH).describe('Shown wherever the role is chosen; unique in the organisation, not a built-in role\'s name'),
  description: z.string().max(ROLE_DESCRIPTION_MAX_LENGTH).nullable().optional().describe('What the role is for, for the people who give it'),
  capabilities: z.array(z.enum(CAPABILITIES)).max(CAPABILITIES.length).describe('What the role may do beyond reading (GET /roles lists every capability with what it allows); empty: reading only'),
  formSetIds: z.array(z.uuid()).min(1).max(MAX_ROLE_FORM_SETS).nullable().optional().describe(`Limits ${FORM_SET_CAPABILITIES.join(', ')} to entries of these form sets; absent or null: every form set`),
  idempotencyKey: z.string().optional(),
});

const customRoleSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    capabilities: z.array(z.enum(CAPABILITIES)),
    formSetIds: z.array(z.uuid()).nullable().describe('The form sets the content capabilities are limited to; null: every form set'),
    members: z.number().int().describe('How many enabled members hold the role (in GET /roles; 0 in the answers of writes)'),
  })
  .meta({ id: 'CustomRole' });

const roleListSchema = z
  .object({
    items: z.array(customRoleSchema).describe("The organisation's own roles, by name"),
    builtInRoles: z.array(z.object({ role: z.enum(['tenant_admin', 'tenant_user']), capabilities: z.array(z.enum(CAPABILITIES)) })).describe("The spec's two roles as capabilities (tenant_admin also defines roles and sign-in)"),
    capabilities: z
      .array(z.object({ capability: z.enum(CAPABILITIES), label: z.string().describe('What it allows'), limitedByFormSets: z.boolean().describe('Whether a role\'s formSetIds narrows it') }))
      .describe('Every capability a role may hold, in order'),
  })
  .meta({ id: 'RoleList' });

const roleAnswer = (role: CustomRole, members = 0): z.input<typeof customRoleSchema> => ({ id: role.roleId, name: role.name, description: role.description, capabilities: role.capabilities, formSetIds: role.formSetIds, members });

/**
 * GET, POST, PUT and DELETE /roles: the organisation's own roles, as sets of capabilities (src/domain/capabilities.ts),
 * optionally limited to form sets. Every member may list them; only a tenant_admin defines, changes or removes one
 * (roles.manage), so that nobody else can write themselves a wider role. A role held by a member is not removed.
 */
export function roleRoutes(deps: AdminDeps, api: ApiRegistry): Router {
  const router = newRouter();
  const accessModel = accessQueries(deps.reader);
  const holders = async (tenantId: string) => {
    const counts = new Map<string, number>();
    for (const user of await accessModel.usersOfTenant(tenantId)) {
      if (user.roleId && !user.disabled) counts.set(user.roleId, (counts.get(user.roleId) ?? 0) + 1);
    }
    return counts;
  };
  const roleIdOf = (value: string | undefined): string => {
    if (!value || !isUuid(value)) throw notFound(`No role ${value}.`);
    return value.toLowerCase();
  };

  api.add(router, { method: 'get', path: '/roles', operationId: 'listRoles', permission: 'roles.read', summary: "The organisation's roles: its own (custom roles, with how many members hold each), the two built-in roles, and every capability a role may hold", tag: 'Roles', responses: { 200: { description: 'The roles', schema: roleListSchema } }, errors: {} }, async (ctx) => {
    const caller = principalOf(ctx);
    const tenant = await accessModel.tenant(caller.tenantId);
    const counts = await holders(caller.tenantId);
    ctx.body = {
      items: (tenant?.roles ?? []).map((role) => roleAnswer(role, counts.get(role.roleId) ?? 0)),
      builtInRoles: [
        { role: 'tenant_admin', capabilities: [...TENANT_ADMIN_GRANTS.capabilities] },
        { role: 'tenant_user', capabilities: [...TENANT_USER_GRANTS.capabilities] },
      ],
      capabilities: CAPABILITIES.map((capability) => ({ capability, label: CAPABILITY_LABELS[capability], limitedByFormSets: FORM_SET_CAPABILITIES.includes(capability) })),
    } satisfies z.input<typeof roleListSchema>;
  });

  api.add(router, { method: 'post', path: '/roles', operationId: 'createRole', permission: 'roles.manage', summary: 'Define a role of the organisation\'s own (tenant_admin session; recorded as tenant.role-defined). 409 when the name is taken or the organisation has 50 roles.', tag: 'Roles', body: roleBody, bodyLimitBytes: 32 * 1024, responses: { 201: { description: 'The role', schema: customRoleSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const { idempotencyKey: _key, ...definition } = body;
    const created = await idempotentCreate(deps, ctx, { scope: `tenant:${caller.tenantId}`, operation: 'create_role', key: idempotencyKeyOf(ctx, body), request: definition, ids: ['roleId'] }, async (ids) => {
      const made = await deps.access.roles.define(caller, caller.tenantId, definition, { roleId: ids['roleId']!, ...actingProject(ctx) });
      wrote(ctx, made.position, ['access']);
      return roleAnswer(made.role);
    });
    ctx.status = 201;
    ctx.body = created;
  });

  api.add(router, { method: 'put', path: '/roles/:roleId', operationId: 'updateRole', permission: 'roles.manage', summary: 'Change a custom role as a whole (tenant_admin session; recorded as tenant.role-changed): its members may do what it says from their next request', tag: 'Roles', body: roleBody.omit({ idempotencyKey: true }), bodyLimitBytes: 32 * 1024, responses: { 200: { description: 'The role as changed', schema: customRoleSchema } }, errors: { 404: ['NOT_FOUND'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const roleId = roleIdOf(ctx.params['roleId']);
    const changed = await deps.access.roles.redefine(caller, caller.tenantId, roleId, body, actingProject(ctx));
    wrote(ctx, changed.position, ['access']);
    ctx.body = roleAnswer(changed.role, (await holders(caller.tenantId)).get(roleId) ?? 0);
  });

  api.add(router, { method: 'delete', path: '/roles/:roleId', operationId: 'deleteRole', permission: 'roles.manage', summary: 'Remove a custom role (tenant_admin session; recorded as tenant.role-removed). 409 while an enabled member holds it: give them another role first.', tag: 'Roles', responses: { 204: { description: 'Removed (or there was none)', empty: true } }, errors: { 409: ['CONFLICT'] } }, async (ctx) => {
    const caller = principalOf(ctx);
    const roleId = roleIdOf(ctx.params['roleId']);
    const result = await deps.access.roles.remove(caller, caller.tenantId, roleId, (await holders(caller.tenantId)).get(roleId) ?? 0, actingProject(ctx));
    wrote(ctx, result.position, ['access']);
    ctx.status = 204;
  });
  return router;
}
