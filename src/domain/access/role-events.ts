import { z } from 'zod';
import { defineEvent } from '../../event-store/event-catalog.ts';
import { CAPABILITIES } from '../capabilities.ts';
import { id } from './access-event-fields.ts';

/** Events of a tenant's custom roles (src/domain/access/custom-roles.ts), on the tenant's stream. */

/** A custom role as a whole: its name, what it may do, and the form sets its content capabilities are limited to (null: all). */
const customRoleFields = {
  tenantId: id,
  roleId: id,
  name: z.string().min(1).max(80),
  description: z.string().max(500),
  capabilities: z.array(z.enum(CAPABILITIES)),
  formSetIds: z.array(id).min(1).nullable(),
  /** The project the tenant admin acted in, whose audit log shows the change (absent when none, e.g. the CLI). */
  projectId: id.optional(),
};

/** A tenant admin defined a role of the tenant's own (src/domain/access/custom-roles.ts). */
export const tenantRoleDefined = defineEvent({ type: 'tenant.role-defined', version: 1, schema: z.object(customRoleFields) });

/** A custom role's definition changed, as a whole after the change: its members may do what it says from now on. */
export const tenantRoleChanged = defineEvent({ type: 'tenant.role-changed', version: 1, schema: z.object(customRoleFields) });

/** A custom role was removed (no member held it). */
export const tenantRoleRemoved = defineEvent({ type: 'tenant.role-removed', version: 1, schema: z.object({ tenantId: id, roleId: id, projectId: id.optional() }) });
