import path from 'node:path';
import { runEntry, startServiceProcess, type StartedService } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { SESSION_ADDRESS, type FuzzTarget } from './fuzzer.ts';

/** Agent keys the fuzzer's requests are spread over (each paced below its rate limit). */
const AGENT_KEYS = 24;

interface Demo {
  projectId: string;
  agentKey: string;
  publicApiKey: string;
  adminEmail: string;
  adminPassword: string;
}

/**
 * A service process (as `npm start` runs it) on a fresh DATA_DIR holding the demo project (`npm run cli -- demo`:
 * form sets, entries in every workflow status, masters, a contact form), and what the fuzzer needs to address it.
 */
export async function startFuzzTarget(env: Record<string, string> = {}): Promise<{ target: FuzzTarget; service: StartedService; stop(): Promise<void> }> {
  const dataDir = path.join(tempDir('annals-fuzz-'), 'data');
  const seeded = await runEntry('src/cli/main.ts', ['demo'], { DATA_DIR: dataDir }, 180_000);
  if (seeded.code !== 0) throw new Error(`demo failed: ${seeded.stderr}`);
  const demo = JSON.parse(seeded.stdout) as Demo;
  const service = await startServiceProcess(
    {
      DATA_DIR: dataDir,
      // Huge bodies make the event loop lag; shedding would then refuse requests before any handler sees them.
      LOAD_SHED_LAG_MS: '0',
      // The fuzzer's requests come from many (forwarded) addresses, as a site's readers do, and its own sign-ins
      // from another one than its guesses: the limits per address (contact submissions, sign-in throttling) stay
      // as they are and meet a population of clients. The agent keys' limits are kept by pacing (fuzzer.ts).
      TRUST_PROXY: 'true',
      ...env,
    },
    120_000,
    { keepRequestLogs: false },
  );
  const url = service.url;
  const signIn = async (): Promise<string> => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const response = await fetch(`${url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': SESSION_ADDRESS }, body: JSON.stringify({ email: demo.adminEmail, password: demo.adminPassword }) });
      if (response.status === 200) return ((await response.json()) as { token: string }).token;
      await new Promise((resolve) => setTimeout(resolve, 200)); // projections catching up with the demo, or a throttled sign-in
    }
    throw new Error('the demo admin cannot sign in');
  };
  // A session is reused for 50 requests (the fuzzer may sign it out), then a new one is made.
  let current: { token: Promise<string>; uses: number } | undefined;
  const session = (): Promise<string> => {
    if (!current || current.uses >= 50) current = { token: signIn(), uses: 0 };
    current.uses += 1;
    return current.token;
  };
  const token = await session();
  const admin = async (route: string): Promise<any> => {
    const response = await fetch(`${url}/admin/v1${route}`, { headers: { authorization: `Bearer ${token}`, 'x-project-id': demo.projectId, 'x-forwarded-for': SESSION_ADDRESS } });
    return response.status === 200 ? response.json() : { items: [] };
  };
  // A population of agents: more keys of the project (Business plan: any number), each paced by the fuzzer.
  const agentKeys = [demo.agentKey];
  for (let i = 1; i < AGENT_KEYS; i++) {
    const issued = await fetch(`${url}/admin/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'x-project-id': demo.projectId, 'x-forwarded-for': SESSION_ADDRESS, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'agent', scope: 'full', name: `Fuzzer ${i}` }),
    });
    if (issued.status !== 201) throw new Error(`issuing agent key ${i}: ${issued.status} ${await issued.text()}`);
    agentKeys.push(((await issued.json()) as { key: string }).key);
  }
  const known: Record<string, string[]> = { projectId: [demo.projectId], id: ['blog', 'faq', 'news', 'landing'], part: ['1', '2'] };
  const add = (name: string, value: unknown) => {
    if (typeof value !== 'string') return;
    (known[name] ??= []).push(value);
  };
  for (const formSet of (await admin('/form-sets')).items ?? []) {
    add('formSetId', formSet.id);
    add('slug', formSet.slug);
    add('formSetSlug', formSet.slug);
    for (const entry of (await admin(`/form-sets/${formSet.id}/entries?limit=20`)).items ?? []) {
      add('entryId', entry.id);
      add('entrySlug', entry.slug);
      add('revisionId', entry.latestRevision?.revisionId);
      add('revisionId', entry.liveRevision?.revisionId);
    }
  }
  for (const master of (await admin('/master-entities')).items ?? []) {
    add('masterId', master.id ?? master.masterId);
    add('key', master.key);
    for (const record of master.records ?? []) add('value', record.value);
  }
  for (const form of (await admin('/contact-forms')).items ?? []) {
    add('formId', form.id);
    add('slug', form.slug);
  }
  return {
    target: { url, projectId: demo.projectId, agentKeys, publicKey: demo.publicApiKey, session, known },
    service,
    stop: async () => {
      await service.stop();
    },
  };
}
