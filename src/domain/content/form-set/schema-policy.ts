import { forbidden } from '../../domain-error.ts';
import { grantsOf, type Principal } from '../../principal.ts';

/**
 * Who may change content schema (form sets, their blocks and field definitions, masters, blueprints).
 * Spec section 5: full and schema agent keys may; a content key may only read the schema; agent keys of
 * any scope may never delete form sets, blocks or field definitions, which is a console tenant_admin
 * action. Console users: the schema.manage capability (tenant_admin, or a custom role with it; tenant_user
 * creates, edits and submits entries).
 */
export function assertMayChangeSchema(principal: Principal, what = 'change form sets'): void {
  if (principal.kind === 'agent') {
    if (principal.scope === 'content') {
      throw forbidden(`A content-scope agent key may read the schema but not ${what}.`, 'Use an agent key with scope full (or schema).');
    }
    return;
  }
  if (!grantsOf(principal).capabilities.includes('schema.manage')) {
    throw forbidden(`Only a tenant_admin may ${what}, or a custom role with the schema.manage capability.`, 'Ask a tenant_admin of the project.');
  }
}

/** Deleting a form set, a form block or a field definition: a console session with schema.manage only. */
export function assertMayDeleteSchema(principal: Principal, what = 'form sets, blocks or field definitions'): void {
  if (principal.kind === 'agent') {
    throw forbidden(
      `Agent keys may never delete form sets, blocks or field definitions (any scope); refused to delete ${what}.`,
      'A tenant_admin can delete it in the admin console.',
    );
  }
  if (!grantsOf(principal).capabilities.includes('schema.manage')) {
    throw forbidden(`Only a tenant_admin may delete form sets, blocks or field definitions, or a custom role with the schema.manage capability; refused to delete ${what}.`, 'Ask a tenant_admin of the project.');
  }
}
