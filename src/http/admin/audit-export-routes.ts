import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { AuditExportUnavailableError, exportAudit, type AuditExportSelection, type AuditExportSigning, type AuditExportSummary } from '../../audit/audit-export.ts';
import type { OpenedAuditKeyRing } from '../../audit/chained-audit-key-ring.ts';
import { AuditKeySetupError } from '../../audit/audit-key-files.ts';
import { SlotsFullError, WorkSlots } from '../../security/work-slots.ts';
import { newRouter } from '../router.ts';
import { notFound, unavailable, validationError } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { type AdminDeps, projectOf } from './admin-context.ts';
import { instant, strictQuery } from './list-query.ts';
import { isUuid } from './request-body.ts';

/** One export at a time per process (a period export reads the whole log), one more waiting. */
const EXPORT_SLOTS = { concurrency: 1, maxQueued: 1 };

const NDJSON = 'application/x-ndjson';

const periodQuery = strictQuery({
  from: instant.describe('The period\'s start (inclusive): an ISO 8601 date-time with an offset.'),
  to: instant.describe('The period\'s end (exclusive): an ISO 8601 date-time with an offset, after from.'),
});

const bundleDescription =
  'The signed audit export (NDJSON, format annals-audit-export version 2: a header line, the event lines, the actor lines, a line per stream, an end line with the SHA-256 of the lines before it and an Ed25519 signature). Verify it without the service: node scripts/audit/verify-audit-export.mjs BUNDLE --public-key KEY.json (docs/audit.md). X-Audit-Export-Digest repeats the digest its end line signs.';
const bundleResponse = { description: bundleDescription, schema: z.string().describe('NDJSON: one JSON object per line.'), mediaType: NDJSON, headers: { 'Content-Disposition': 'attachment; filename="audit-....ndjson"', 'X-Audit-Export-Digest': 'sha256:<hex>: the digest the end line signs' } };

/**
 * The ring that signs exports here: the projector process's, or the one an API-only process opens at its first
 * export (the same key configuration). A process that cannot open it (the key file or the token is not on this
 * host) answers 503, naming what is missing.
 */
async function signingRing(ring: () => Promise<OpenedAuditKeyRing>): Promise<OpenedAuditKeyRing> {
  try {
    return await ring();
  } catch (error) {
    if (error instanceof AuditKeySetupError) {
      throw unavailable(`This process cannot sign audit exports: ${error.message}.`, { hint: 'Give this process the audit key (the same AUDIT_KEY_FILE or AUDIT_PKCS11_* as the projector process), or send audit export requests to a process with the projector role.' });
    }
    throw error;
  }
}

/**
 * Audit exports for a project's tenant admins (the same as `annals audit export`, src/audit/audit-export.ts):
 * a period, or one entry's whole history, with the actors their events name, signed. Each export is written
 * to a private temporary file (mode 0600), then sent and removed, so an export that fails answers an error
 * rather than a cut bundle. Agent keys and tenant users are refused (audit.read).
 */
export function auditExportRoutes(deps: AdminDeps, api: ApiRegistry, signing: AuditExportSigning | undefined): Router {
  const router = newRouter();
  const slots = new WorkSlots(EXPORT_SLOTS);

  const send = async (ctx: Context, selection: AuditExportSelection) => {
    if (!signing) throw unavailable('Audit exports are not available on this process.');
    const project = projectOf(ctx);
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'annals-audit-export-'));
    const file = path.join(dir, 'export.ndjson');
    let summary: AuditExportSummary;
    try {
      summary = await slots.run(async () => exportAudit(deps.log.store, await signingRing(signing.ring), signing.log, { projectId: project.projectId, selection, file, now: () => deps.clock.now() }));
    } catch (error) {
      await fs.promises.rm(dir, { recursive: true, force: true });
      if (error instanceof SlotsFullError) throw unavailable('An audit export is running; try again shortly.', { retryAfterSeconds: 5 });
      if (error instanceof AuditExportUnavailableError) throw unavailable(`The audit export cannot be made now: ${error.message}`, { retryAfterSeconds: 5 });
      throw error;
    }
    const what = selection.kind === 'entry' ? `entry-${selection.entryId}` : `${selection.from.slice(0, 10)}-${selection.to.slice(0, 10)}`;
    const stream = fs.createReadStream(file);
    stream.once('close', () => void fs.promises.rm(dir, { recursive: true, force: true }));
    ctx.set('Content-Type', NDJSON);
    ctx.set('Content-Disposition', `attachment; filename="audit-${project.slug}-${what}.ndjson"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Audit-Export-Digest', summary.digest);
    ctx.length = (await fs.promises.stat(file)).size;
    ctx.body = stream;
  };

  api.add(
    router,
    {
      method: 'get',
      path: '/audit/exports/period',
      operationId: 'exportAuditPeriod', permission: 'audit.read',
      summary: 'A signed audit export of the project\'s events whose time is in [from, to), with the events of the people and agent keys they name (who they are, their roles and who issued each key, up to to), tenant_admin sessions only',
      tag: 'History',
      query: periodQuery,
      responses: { 200: bundleResponse },
      errors: { 503: ['SERVICE_UNAVAILABLE'] },
    },
    async (ctx, { query }) => {
      if (Date.parse(query.from) >= Date.parse(query.to)) throw validationError('to: must be after from.');
      await send(ctx, { kind: 'period', from: query.from, to: query.to });
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/audit/exports/entries/:entryId',
      operationId: 'exportAuditEntry', permission: 'audit.read',
      summary: 'A signed audit export of one entry\'s whole history (every event of its stream), with the events of the people and agent keys they name, tenant_admin sessions only',
      tag: 'History',
      responses: { 200: bundleResponse },
      errors: { 503: ['SERVICE_UNAVAILABLE'] },
    },
    async (ctx) => {
      const entryId = ctx.params['entryId'];
      if (!isUuid(entryId)) throw notFound(`No entry ${entryId}.`);
      await send(ctx, { kind: 'entry', entryId: entryId.toLowerCase() });
    },
  );

  return router;
}
