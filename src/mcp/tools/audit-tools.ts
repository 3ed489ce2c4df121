import { z } from 'zod';
import { defineTool, READ_ONLY, uuid, type ToolDefinition } from '../tool-kit.ts';
import { consistencyProofSchema, inclusionProofSchema, logCheckpointSchema } from '../../http/admin/audit-routes.ts';

const size = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * The log's Merkle tree (docs/audit.md): its latest signed checkpoint, and proofs an auditor checks without
 * trusting the service. Tenant admins (a session): an agent key is refused by the admin API.
 */
export const auditTools: ToolDefinition[] = [
  defineTool({
    name: 'get_log_checkpoint',
    title: 'The log\'s latest signed checkpoint',
    description:
      'Answers {checkpoint: {size, rootHash, note, signedAt, cosignatures, timestampToken} or null, treeSize}: the latest C2SP tlog-checkpoint signed over the Merkle tree of the whole event log (RFC 9162), with witnesses\' cosignatures. Keep the note: a later log that does not extend it was rewritten. Tenant admin sessions only.',
    input: {},
    output: z.object({ checkpoint: logCheckpointSchema.nullable(), treeSize: size }),
    annotations: READ_ONLY,
    run: (_args, context) => context.api.get('/audit/checkpoint'),
  }),
  defineTool({
    name: 'get_log_inclusion_proof',
    title: 'Prove an event is in the log\'s tree',
    description:
      'Answers an RFC 9162 inclusion proof that an event of this project is leaf leafIndex of the tree of a signed checkpoint: {leafIndex, treeSize, proof (base64 hashes), leafHash, leaf (the leaf bytes), event, checkpoint}. Check it with golang.org/x/mod/sumdb/tlog CheckRecord or docs/audit.md. Events of other projects are not found. Tenant admin sessions only.',
    input: { eventId: uuid('an event id'), treeSize: size.optional().describe('The checkpoint to prove against (default: the latest).') },
    output: inclusionProofSchema,
    annotations: READ_ONLY,
    run: (args, context) => context.api.get('/audit/proofs/inclusion', { query: { eventId: args.eventId, ...(args.treeSize === undefined ? {} : { treeSize: String(args.treeSize) }) } }),
  }),
  defineTool({
    name: 'get_log_consistency_proof',
    title: 'Prove one checkpoint\'s tree is a prefix of a later one\'s',
    description:
      'Answers an RFC 9162 consistency proof that the log\'s tree of fromSize leaves is a prefix of the tree of toSize (default: the latest checkpoint): {fromSize, toSize, proof, from, to}. A log that was rewritten, truncated or reordered before fromSize has none. Tenant admin sessions only.',
    input: { fromSize: size, toSize: size.optional() },
    output: consistencyProofSchema,
    annotations: READ_ONLY,
    run: (args, context) => context.api.get('/audit/proofs/consistency', { query: { fromSize: String(args.fromSize), ...(args.toSize === undefined ? {} : { toSize: String(args.toSize) }) } }),
  }),
];
