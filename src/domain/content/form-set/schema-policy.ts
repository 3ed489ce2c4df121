import { forbidden } from '../../domain-error.ts';
import type { Principal } from '../../principal.ts';

/**
 * Who may change content schema (form sets, their blocks and field definitions, masters, blueprints).
 * Spec section 5: full and schema agent keys may; a content key may only read the schema; agent keys of
 * any scope may never delete form sets, blocks or field definitions, which is a console tenant_admin
 * action. Console users: schema is a project setting, so tenant_admin (tenant_user creates, edits and
 * submits entries).
 */
export function assertMayChangeSchema(principal: Principal, what = 'change form sets'): void {
  if (principal.kind === 'agent') {
    if (principal.scope === 'content') {
      throw forbidden(`A content-scope agent key may read the schema but not ${what}.`, 'Use an agent key with scope full (or schema).');
    }
    return;
  }
  if (principal.role !== 'tenant_admin') {
    throw forbidden(`Only a tenant_admin may ${what}.`, 'Ask a tenant_admin of the project.');
  }
}

/** Deleting a form set, a form block or a field definition: a console tenant_admin only. */
export function assertMayDeleteSchema(principal: Principal, what = 'form sets, blocks or field definitions'): void {
  if (principal.kind === 'agent') {
    throw forbidden(
      `Agent keys may never delete form sets, blocks or field definitions (any scope); refused to delete ${what}.`,
      'A tenant_admin can delete it in the admin console.',
    );
  }
  if (principal.role !== 'tenant_admin') {
    throw forbidden(`Only a tenant_admin may delete form sets, blocks or field definitions; refused to delete ${what}.`, 'Ask a tenant_admin of the project.');
  }
}
