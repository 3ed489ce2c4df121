import type { Principal } from '../../principal.ts';
import { assertMayChangeSchema } from '../form-set/schema-policy.ts';

/**
 * Applying a form blueprint or a built-in template (spec section 5: a content key calling blueprint
 * application gets 403 FORBIDDEN): agent keys of scope full or schema, or a tenant_admin session.
 */
export function assertMayApplyBlueprint(principal: Principal): void {
  assertMayChangeSchema(principal, 'apply blueprints or templates');
}

/** Applying a master blueprint: the same rights as creating masters (validating one writes nothing and needs no more than a valid key). */
export function assertMayApplyMasterBlueprint(principal: Principal): void {
  assertMayChangeSchema(principal, 'apply master blueprints');
}
