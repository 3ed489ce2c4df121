import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { newRouter } from '../router.ts';
import { notFound, unavailable, validationError } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { type AdminDeps, projectOf } from './admin-context.ts';
import type { LogTreeRuntime } from '../../audit/log-tree-runtime.ts';
import { CheckpointsHeldError } from '../../audit/log-checkpoints.ts';
import { ProofUnavailableError } from '../../audit/log-proofs.ts';

const base64Hash = z.string().describe('A SHA-256 hash, base64.');

export const logCheckpointSchema = z
  .object({
    size: z.int().min(0).describe('Events (leaves) the tree of this checkpoint holds, in log order.'),
    rootHash: base64Hash.describe('The RFC 9162 root hash of the tree, base64.'),
    note: z.string().describe('The C2SP tlog-checkpoint signed note: origin, size, root hash, an empty line, signature lines. Verify it with the log\'s vkey (golang.org/x/mod/sumdb/note, or docs/audit.md).'),
    signedAt: z.iso.datetime(),
    cosignatures: z.record(z.string(), z.string()).describe('Witness cosignature lines (cosignature/v1), by witness name.'),
    timestampToken: z.string().nullable().describe('An RFC 3161 TimeStampToken over the note (DER, base64), when AUDIT_TSA_URL is set.'),
  })
  .meta({ id: 'LogCheckpoint' });

const latestSchema = z
  .object({
    checkpoint: logCheckpointSchema.nullable().describe('The latest signed checkpoint, or null before the first.'),
    treeSize: z.int().min(0).describe('Leaves the tree holds now (a checkpoint follows within a second of it growing).'),
  })
  .meta({ id: 'LogCheckpointLatest' });

export const inclusionProofSchema = z
  .object({
    leafIndex: z.int().min(0).describe('The event\'s leaf, 0-based, in log order.'),
    treeSize: z.int().min(1),
    proof: z.array(base64Hash).describe('The RFC 9162 inclusion path, from the leaf up.'),
    leafHash: base64Hash.describe('SHA-256(0x00 || leaf).'),
    leaf: z.string().describe('The leaf bytes (UTF-8): format line, stream, revision, id, type, canonical metadata, data (docs/audit.md). Recompute leafHash from it.'),
    event: z.object({ id: z.uuid(), streamId: z.string(), revision: z.string(), position: z.string(), type: z.string(), projectId: z.string().nullable() }),
    checkpoint: logCheckpointSchema,
  })
  .meta({ id: 'LogInclusionProof' });

export const consistencyProofSchema = z
  .object({
    fromSize: z.int().min(0),
    toSize: z.int().min(0),
    proof: z.array(base64Hash).describe('The RFC 9162 consistency proof.'),
    from: logCheckpointSchema.nullable().describe('The checkpoint of fromSize, when one is kept.'),
    to: logCheckpointSchema,
  })
  .meta({ id: 'LogConsistencyProof' });

const treeSize = z
  .string()
  .regex(/^\d{1,15}$/, 'a tree size (a whole number)')
  .transform(Number);
const inclusionQuery = z.object({ eventId: z.uuid('an event id (UUID)'), treeSize: treeSize.optional().describe('The checkpoint to prove against (default: the latest).') });
const consistencyQuery = z.object({ fromSize: treeSize, toSize: treeSize.optional().describe('Default: the latest checkpoint.') });

/**
 * The log's Merkle tree for tenant admins (docs/audit.md): its latest signed checkpoint, a checkpoint on demand,
 * inclusion proofs of the project's events, consistency proofs between checkpoints. An inclusion proof discloses
 * the event's leaf (its content) and the hashes of other subtrees, which reveal nothing of other tenants' events
 * (each covers random ids); it is given only for an event of the request's project: any other event, another
 * tenant's above all, answers 404 as an event that does not exist.
 */
/** How long POST /audit/checkpoint waits for the tree to take in the log as it was at the request. */
const CHECKPOINT_CATCH_UP_MS = 5_000;

export function auditRoutes(deps: AdminDeps, api: ApiRegistry, logTree: LogTreeRuntime | undefined): Router {
  const router = newRouter();
  const tag = 'Audit';
  const runtime = (_ctx: Context): LogTreeRuntime => {
    if (!logTree) throw unavailable('The log tree is not open in this process.');
    return logTree;
  };
  const proved = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof ProofUnavailableError) {
        if (error.reason === 'event-not-found') throw notFound(error.message);
        if (error.reason === 'invalid-sizes') throw validationError(error.message);
        throw notFound(error.message, { hint: 'GET /audit/checkpoint names the latest checkpoint; a checkpoint follows the log within a second.' });
      }
      throw error;
    }
  };

  api.add(router, { method: 'get', path: '/audit/checkpoint', operationId: 'getLogCheckpoint', permission: 'audit.read', summary: "The log's latest signed checkpoint (C2SP tlog-checkpoint) and the tree's size (tenant_admin session)", tag, responses: { 200: { description: 'The latest checkpoint', schema: latestSchema } }, errors: { 503: ['SERVICE_UNAVAILABLE'] } }, async (ctx) => {
    const tree = runtime(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { checkpoint: await tree.proofs.latestCheckpoint(), treeSize: (await tree.tree.state()).size } satisfies z.input<typeof latestSchema>;
  });

  api.add(router, { method: 'post', path: '/audit/checkpoint', operationId: 'makeLogCheckpoint', permission: 'audit.read', summary: 'Sign a checkpoint of the tree once it holds the log as it was at the request (waiting up to 5 s for it; the latest when it has not grown), published as every checkpoint is (tenant_admin session)', tag, responses: { 200: { description: 'The checkpoint', schema: logCheckpointSchema } }, errors: { 409: ['CONFLICT'], 503: ['SERVICE_UNAVAILABLE'] } }, async (ctx) => {
    const tree = runtime(ctx);
    if (!tree.checkpoints) throw unavailable('Checkpoints are signed by the process with the projector role; this one has none.', { retryAfterSeconds: 1 });
    // The checkpoint covers the log as it was at the request (an auditor asks for one to prove what they just
    // saw): wait a little for the follower to take the head in, then sign whatever the tree holds.
    const head = await deps.log.headPosition();
    const deadline = Date.now() + CHECKPOINT_CATCH_UP_MS;
    while (head !== null && Date.now() < deadline) {
      const { lastPosition } = await tree.tree.state();
      if (lastPosition !== null && lastPosition >= head) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    let made;
    try {
      made = await tree.checkpoints.checkpoint();
    } catch (error) {
      if (error instanceof CheckpointsHeldError) throw unavailable(`No checkpoint is signed: ${error.message}.`);
      throw error;
    }
    if (!made) throw notFound('The log is empty: there is nothing to checkpoint yet.');
    ctx.body = (await tree.proofs.latestCheckpoint())! satisfies z.input<typeof logCheckpointSchema>;
  });

  api.add(router, { method: 'get', path: '/audit/proofs/inclusion', operationId: 'getLogInclusionProof', permission: 'audit.read', summary: "That an event of the project is in the log's tree of a signed checkpoint (RFC 9162 inclusion proof; 404 for an event of another project, or one after the checkpoint)", tag, query: inclusionQuery, responses: { 200: { description: 'The inclusion proof', schema: inclusionProofSchema } }, errors: { 404: ['NOT_FOUND'], 503: ['SERVICE_UNAVAILABLE'] } }, async (ctx, { query }) => {
    const tree = runtime(ctx);
    const projectId = projectOf(ctx).projectId;
    ctx.body = (await proved(() => tree.proofs.inclusion(query.eventId, { ...(query.treeSize === undefined ? {} : { size: query.treeSize }), allow: (event) => event.metadata.projectId === projectId }))) satisfies z.input<typeof inclusionProofSchema>;
  });

  api.add(router, { method: 'get', path: '/audit/proofs/consistency', operationId: 'getLogConsistencyProof', permission: 'audit.read', summary: "That the log's tree of one checkpoint is a prefix of a later one's (RFC 9162 consistency proof)", tag, query: consistencyQuery, responses: { 200: { description: 'The consistency proof', schema: consistencyProofSchema } }, errors: { 400: ['VALIDATION_ERROR'], 404: ['NOT_FOUND'], 503: ['SERVICE_UNAVAILABLE'] } }, async (ctx, { query }) => {
    const tree = runtime(ctx);
    ctx.body = (await proved(() => tree.proofs.consistency(query.fromSize, query.toSize))) satisfies z.input<typeof consistencyProofSchema>;
  });

  return router;
}
