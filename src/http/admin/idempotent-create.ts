import type { Context } from 'koa';
import { randomUUID } from 'node:crypto';
import { Idempotency } from '../../application/idempotency.ts';
import { actorOf } from '../../domain/access/caller.ts';
import { type AdminDeps, principalOf } from './admin-context.ts';

export interface IdempotentCreate {
  /** Whose key space: a project id, or `tenant:<id>` for what belongs to a tenant. */
  scope: string;
  /** issue_key, create_user, ... */
  operation: string;
  /** The Idempotency-Key header or the body's idempotencyKey (idempotencyKeyOf); undefined: no key. */
  key: string | undefined;
  /**
   * The request as the key is checked against (the same key with another request is a 409): never a secret or
   * personal data in clear, since its hash is kept in the log (leave a password out; fingerprint a note's text
   * with a key that erasure destroys).
   */
  request: unknown;
  /** Names of the ids the create makes, reserved with the key so that a retry after a crash makes the same ones. */
  ids: readonly string[];
}

/**
 * Runs a create of an admin route once per idempotency key (spec 4.3: create operations accept one), with the
 * mechanism of the other creates (application/idempotency.ts): the key claimed in its own stream with the ids
 * the create will make, the outcome recorded, a resent key answered from the record, also after a restart.
 * What is recorded is `run`'s reference (ids, a sealed secret), which the route turns into its answer the first
 * time and on every replay alike, so that no secret or personal data is kept in clear for the replay.
 */
export async function idempotentCreate<Reference>(deps: Pick<AdminDeps, 'log' | 'clock'>, ctx: Context, create: IdempotentCreate, run: (ids: Record<string, string>) => Promise<Reference>): Promise<Reference> {
  if (create.key === undefined) return run(Object.fromEntries(create.ids.map((name) => [name, randomUUID()])));
  const idempotency = new Idempotency(deps.log, { clock: deps.clock });
  const { body } = await idempotency.run(
    { scope: create.scope, operation: create.operation, key: create.key, request: create.request, ids: create.ids, actor: actorOf(principalOf(ctx)) },
    async (ids) => ({ status: 201, body: await run(ids) }),
  );
  return body as Reference;
}
