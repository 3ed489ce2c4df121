/**
 * Webhook delivery throughput and latency on the embedded default, against a local HTTPS receiver.
 *
 *   npm run bench:webhooks -- [--count 10000] [--webhooks 3] [--publishers 4] [--paced 200] [--rate 20] [--json]
 *
 * Runs the service in this process (SQLite stores in a temporary folder, every role) with `--webhooks`
 * webhooks of one Standard project subscribed to entry.published, all pointing at one HTTPS receiver on
 * 127.0.0.1 (certificate made now, trusted through WEBHOOK_CA_FILE) that verifies every signature with
 * @octokit/webhooks-methods and notes when each delivery arrived. Then:
 * 1. burst: `--count` entries are created, submitted and published through the entry decider (the same
 *    path as the admin API, without HTTP) by `--publishers` concurrent writers, as fast as they go;
 *    reported: deliveries/s from the first publish to the last receipt, and publish-to-receipt latency
 *    percentiles (in a burst these include the wait behind the backlog);
 * 2. paced: `--paced` entries published at `--rate` per second, a load the dispatcher keeps up with;
 *    reported: publish-to-receipt latency percentiles (fold + outbox poll + HTTPS);
 * 3. baselines, in the same run: (a) the same receiver POSTed directly with node's https client at the
 *    dispatcher's concurrency (the transport alone): requests/s; (b) durable single-event appends to a
 *    SQLite event store in the same folder: appends/s. Each delivery costs two durable appends (the
 *    attempt's start before sending, its outcome after), so (b) / 2 is the bound crash safety sets on
 *    the embedded default; the dispatcher's ratios to both are printed.
 * Absolute numbers on shared machines are noisy; the ratios are the figures to compare.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { testCertificate } from '../../test/webhooks/support.ts';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config/config.ts';
import { startService } from '../../src/service/service.ts';
import { AccessService } from '../../src/application/access-service.ts';
import { handleCommand } from '../../src/application/command-handler.ts';
import { entryDecider } from '../../src/domain/content/entry/entry-decider.ts';
import { entryStream } from '../../src/domain/content/entry/entry-events.ts';
import { formSetDecider } from '../../src/domain/content/form-set/form-set-decider.ts';
import { formSetStreamId } from '../../src/domain/content/form-set/form-set-events.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { ProjectionWatermark } from '../../src/application/projection-watermark.ts';
import { projections } from '../../projections/index.ts';
import { webhookServiceFor } from '../../src/webhooks/webhook-setup.ts';
import { signatureHeader } from '../../src/webhooks/webhook-signature.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { percentile } from './support/percentile.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    webhooks: { type: 'string', default: '3' },
    publishers: { type: 'string', default: '4' },
    paced: { type: 'string', default: '200' },
    rate: { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
  },
});
const count = Number(values.count);
const webhookCount = Number(values.webhooks);
const publishers = Number(values.publishers);
const pacedCount = Number(values.paced);
const rate = Number(values.rate);
const say = (line: string) => process.stderr.write(`${line}\n`);

// ---- the receiver ---------------------------------------------------------------------------------
// A certificate made now, trusted by the dispatcher through WEBHOOK_CA_FILE (as in the tests).
const pems = await testCertificate();
const { caFile } = pems;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-webhooks-'));
const { verify } = await import('@octokit/webhooks-methods');
const secrets = new Map<string, string>();
/** `${path} ${entry_id}` -> receipt time (performance.now()). */
const receipts = new Map<string, number>();
let badSignatures = 0;
let baselineReceived = 0;
const server = https.createServer({ key: pems.key, cert: pems.cert, keepAliveTimeout: 30_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    const urlPath = req.url ?? '/';
    const secret = secrets.get(urlPath);
    if (secret === undefined || !(await verify(secret, raw, String(req.headers['x-service-signature'])))) {
      badSignatures++;
      res.writeHead(401).end();
      return;
    }
    if (urlPath === '/baseline') baselineReceived++;
    else receipts.set(`${urlPath} ${(JSON.parse(raw) as { entry_id: string }).entry_id}`, performance.now());
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const port = (server.address() as { port: number }).port;

// ---- the service ----------------------------------------------------------------------------------
const config = loadConfig({ DATA_DIR: path.join(dir, 'data'), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_CA_FILE: caFile });
const service = await startService(config, { logger: pino({ level: 'silent' }), clock: systemClock });
const project = await new AccessService({ log: service.log, clock: systemClock }).bootstrap(
  { kind: 'operator', operatorId: 'bench' },
  { projectName: 'Bench', plan: 'standard', adminEmail: 'bench@example.com', adminPassword: 'correct horse battery staple', contentLocales: { locales: ['en'], defaultLocale: 'en' } },
);
await service.supervisor!.waitFor(project.position, 10_000);
const admin = { kind: 'user', userId: project.userId, tenantId: project.tenantId, role: 'tenant_admin' } satisfies Principal;
const reader = new ReadModelReader(service.stores.readModels);
const webhooks = webhookServiceFor(config, { log: service.log, reader, watermark: new ProjectionWatermark({ projections, log: service.log, store: service.stores.readModels, supervisor: service.supervisor }), clock: systemClock });
const paths: string[] = [];
for (let i = 0; i < webhookCount; i++) {
  const created = await webhooks.create(admin, { projectId: project.projectId, plan: 'standard' }, { name: `Bench ${i}`, url: `https://127.0.0.1:${port}/hook-${i}`, events: ['entry.published'] });
  secrets.set(`/hook-${i}`, created.secret);
  paths.push(`/hook-${i}`);
}
const formSetId = randomUUID();
await handleCommand(
  service.log,
  formSetStreamId(formSetId),
  formSetDecider,
  { type: 'create_form_set', projectId: project.projectId, definition: { id: formSetId, slug: 'posts', name: 'Posts', fields: [{ key: 'title', type: 'text', label: 'Title' }] } },
  { principal: admin },
  { actor: { type: 'user', id: admin.userId } },
);

/** Creates, submits and publishes one entry; returns when the publish was appended. */
async function publishEntry(n: number): Promise<{ entryId: string; publishedAt: number }> {
  const entryId = randomUUID();
  const revisionId = randomUUID();
  const context = { principal: admin, plan: 'standard' as const, now: new Date() };
  const actor = { actor: { type: 'user' as const, id: admin.userId } };
  const stream = entryStream(entryId);
  await handleCommand(service.log, stream, entryDecider, { type: 'create', entryId, projectId: project.projectId, formSetId, slug: `post-${n}`, initialRevision: { revisionId, snapshot: { title: `Post ${n}` } } }, context, actor);
  await handleCommand(service.log, stream, entryDecider, { type: 'submitForReview', entryId, revisionId }, context, actor);
  await handleCommand(service.log, stream, entryDecider, { type: 'publish', entryId, revisionId, revision: 1 }, context, actor);
  return { entryId, publishedAt: performance.now() };
}

async function waitForReceipts(entries: Array<{ entryId: string }>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const missing = entries.reduce((n, e) => n + paths.filter((p) => !receipts.has(`${p} ${e.entryId}`)).length, 0);
    if (missing === 0) return;
    if (performance.now() > deadline) throw new Error(`${missing} deliveries not received within ${timeoutMs} ms`);
    process.stderr.write(`\r  waiting for ${missing.toLocaleString('en')} deliveries   `);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function latencies(entries: Array<{ entryId: string; publishedAt: number }>): { p50: number; p90: number; p99: number; max: number } {
  const all = entries.flatMap((e) => paths.map((p) => receipts.get(`${p} ${e.entryId}`)! - e.publishedAt));
  const at = (p: number) => Math.round(percentile(all, p));
  return { p50: at(50), p90: at(90), p99: at(99), max: at(100) };
}

// ---- 1. burst --------------------------------------------------------------------------------------
say(`== burst: ${count.toLocaleString('en')} entries published by ${publishers} writers, ${webhookCount} webhooks (${dir})`);
const burst: Array<{ entryId: string; publishedAt: number }> = [];
const burstStart = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: publishers }, async () => {
    while (next < count) {
      const n = next++;
      burst.push(await publishEntry(n));
      if (n % 500 === 0) process.stderr.write(`\r  published ${n.toLocaleString('en')}   `);
    }
  }),
);
const publishDone = performance.now();
process.stderr.write('\r');
await waitForReceipts(burst, 30 * 60_000);
process.stderr.write('\r');
const lastReceipt = Math.max(...burst.flatMap((e) => paths.map((p) => receipts.get(`${p} ${e.entryId}`)!)));
const burstDeliveries = burst.length * webhookCount;
const burstSeconds = (lastReceipt - burstStart) / 1000;
const burstResult = {
  entries: burst.length,
  deliveries: burstDeliveries,
  publishPerSecond: Math.round(burst.length / ((publishDone - burstStart) / 1000)),
  deliveriesPerSecond: Math.round(burstDeliveries / burstSeconds),
  latencyMs: latencies(burst),
};
say(`published ${burstResult.publishPerSecond.toLocaleString('en')} entries/s; delivered ${burstDeliveries.toLocaleString('en')} in ${burstSeconds.toFixed(1)} s: ${burstResult.deliveriesPerSecond.toLocaleString('en')} deliveries/s`);
say(`publish-to-receipt (ms, burst, includes the backlog): p50 ${burstResult.latencyMs.p50}, p90 ${burstResult.latencyMs.p90}, p99 ${burstResult.latencyMs.p99}, max ${burstResult.latencyMs.max}`);

// ---- 2. paced --------------------------------------------------------------------------------------
say(`== paced: ${pacedCount} entries at ${rate}/s`);
const paced: Array<{ entryId: string; publishedAt: number }> = [];
const pacedStart = performance.now();
for (let i = 0; i < pacedCount; i++) {
  const due = pacedStart + (i * 1000) / rate;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  paced.push(await publishEntry(count + i));
}
await waitForReceipts(paced, 5 * 60_000);
process.stderr.write('\r');
const pacedResult = { entries: paced.length, deliveries: paced.length * webhookCount, ratePerSecond: rate, latencyMs: latencies(paced) };
say(`publish-to-receipt (ms, paced): p50 ${pacedResult.latencyMs.p50}, p90 ${pacedResult.latencyMs.p90}, p99 ${pacedResult.latencyMs.p99}, max ${pacedResult.latencyMs.max}`);

// ---- 3. baseline: direct HTTPS POSTs at the dispatcher's concurrency ------------------------------------
const baselineSecret = 'whsec_baseline';
secrets.set('/baseline', baselineSecret);
const agent = new https.Agent({ keepAlive: true, maxSockets: config.webhooks.concurrency, secureContext: tls.createSecureContext({ ca: [...tls.rootCertificates, pems.cert] }) });
const inFlight = Math.min(config.webhooks.concurrency, webhookCount * config.webhooks.concurrencyPerWebhook);
const body = Buffer.from(JSON.stringify({ event: 'entry.published', project_id: project.projectId, form_set_slug: 'posts', entry_slug: 'post-0', entry_id: randomUUID(), revision_id: randomUUID(), timestamp: new Date().toISOString() }));
const post = () =>
  new Promise<void>((resolve, reject) => {
    const req = https.request(
      { hostname: '127.0.0.1', port, path: '/baseline', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-service-signature': signatureHeader(baselineSecret, body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve());
      },
    );
    req.on('error', reject);
    req.end(body);
  });
const baselineCount = Math.min(burstDeliveries, 20_000);
let sent = 0;
const baselineStart = performance.now();
await Promise.all(
  Array.from({ length: inFlight }, async () => {
    while (sent < baselineCount) {
      sent++;
      await post();
    }
  }),
);
const baselinePerSecond = Math.round(baselineCount / ((performance.now() - baselineStart) / 1000));
agent.destroy();
say(`baseline: direct HTTPS POSTs, ${inFlight} in flight: ${baselinePerSecond.toLocaleString('en')} requests/s; dispatcher/baseline ratio ${(burstResult.deliveriesPerSecond / baselinePerSecond).toFixed(2)}`);
// (b) durable appends, one event each, as the dispatcher makes them.
const scratch = SqliteEventStore.open(path.join(dir, 'baseline-events.sqlite'));
const appendCount = 2000;
const appendStart = performance.now();
for (let i = 0; i < appendCount; i++) {
  await scratch.append(`baseline-${i}`, [{ id: randomUUID(), type: 'bench.appended', data: { payload: body.toString('utf8') }, metadata: { actor: { type: 'system', id: 'bench' }, correlationId: randomUUID(), causationId: null, occurredAt: new Date().toISOString(), schemaVersion: 1 } }], 'no_stream');
}
const appendsPerSecond = Math.round(appendCount / ((performance.now() - appendStart) / 1000));
await scratch.close();
const durableBound = appendsPerSecond / 2;
say(`baseline: durable single-event appends: ${appendsPerSecond.toLocaleString('en')}/s, so at most ${Math.round(durableBound).toLocaleString('en')} deliveries/s with two per delivery; dispatcher/bound ratio ${(burstResult.deliveriesPerSecond / durableBound).toFixed(2)}`);
if (badSignatures > 0) say(`WARNING: ${badSignatures} requests failed signature verification`);

await service.stop();
await new Promise<void>((resolve) => server.close(() => resolve()));
fs.rmSync(dir, { recursive: true, force: true });

if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ webhooks: webhookCount, concurrency: config.webhooks, burst: burstResult, paced: pacedResult, baseline: { https: { requests: baselineCount, inFlight, perSecond: baselinePerSecond }, durableAppendsPerSecond: appendsPerSecond }, ratioToHttps: burstResult.deliveriesPerSecond / baselinePerSecond, ratioToDurableBound: burstResult.deliveriesPerSecond / durableBound, badSignatures, receivedBaseline: baselineReceived }, null, 2)}\n`,
  );
}
