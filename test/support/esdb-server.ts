/**
 * The KurrentDB / EventStoreDB server the EventStoreDB suites run against, in this order of preference: the
 * server EVENTSTORE_CONNECTION_STRING names; a fresh single-node container started with testcontainers
 * (in-memory, insecure) where a container runtime answers; otherwise the gRPC stand-in
 * (test/support/esdb-stand-in/: the real client against the server's protocol, not a real server). Suite
 * titles say which one ran.
 */
import { randomUUID } from 'node:crypto';
import type { StartedTestContainer } from 'testcontainers';
import { EventStoreDbEventStore } from '../../src/event-store/esdb-event-store.ts';
import { UnavailableError } from '../../src/event-store/errors.ts';
import { probeContainerRuntime } from './container-runtime.ts';
import { EsdbStandIn } from './esdb-stand-in/server.ts';

export const EVENTSTORE_IMAGE = process.env.EVENTSTORE_IMAGE ?? 'eventstore/eventstore:24.10';

export type EsdbTarget = { kind: 'existing'; url: string } | { kind: 'container' } | { kind: 'stand-in' };

export async function resolveEsdbTarget(): Promise<EsdbTarget> {
  const url = process.env['EVENTSTORE_CONNECTION_STRING'];
  if (url) return { kind: 'existing', url };
  return (await probeContainerRuntime()) ? { kind: 'stand-in' } : { kind: 'container' };
}

/** For suite titles: which server the suite runs against. */
export function describeEsdbTarget(target: EsdbTarget): string {
  switch (target.kind) {
    case 'existing':
      return 'the server at EVENTSTORE_CONNECTION_STRING';
    case 'container':
      return `a ${EVENTSTORE_IMAGE} container`;
    case 'stand-in':
      return 'the gRPC stand-in (the real client against the server protocol, not a real server)';
  }
}

export interface StartedEsdbServer {
  connectionString: string;
  /** Set when the target is the stand-in. */
  standIn?: EsdbStandIn;
  stop(): Promise<void>;
}

/** Starts the target (a container or the stand-in) and waits until it takes a write. */
export async function startEsdbServer(target: EsdbTarget): Promise<StartedEsdbServer> {
  if (target.kind === 'stand-in') {
    const standIn = await EsdbStandIn.start();
    return { connectionString: standIn.connectionString(), standIn, stop: () => standIn.stop() };
  }
  let container: StartedTestContainer | undefined;
  let connectionString = target.kind === 'existing' ? target.url : '';
  if (target.kind === 'container') ({ connectionString, container } = await startEventStoreDbContainer());
  await waitForWrites(connectionString);
  return { connectionString, stop: async () => void (await container?.stop()) };
}

export async function startEventStoreDbContainer(): Promise<{ connectionString: string; container: StartedTestContainer }> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer(EVENTSTORE_IMAGE)
    .withEnvironment({
      EVENTSTORE_INSECURE: 'true',
      EVENTSTORE_RUN_PROJECTIONS: 'None',
      EVENTSTORE_MEM_DB: 'true',
      EVENTSTORE_CLUSTER_SIZE: '1',
    })
    .withExposedPorts(2113)
    .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCode(204))
    .withStartupTimeout(150_000)
    .start();
  return { connectionString: `esdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`, container };
}

/** "Live" comes before a single node has elected itself leader: wait until it takes a write. */
async function waitForWrites(connectionString: string): Promise<void> {
  const probe = EventStoreDbEventStore.connect(connectionString);
  const event = {
    id: randomUUID(),
    type: 'probe',
    data: {},
    metadata: { actor: { type: 'system' as const, id: 'tests' }, correlationId: randomUUID(), causationId: null, occurredAt: new Date().toISOString(), schemaVersion: 1 },
  };
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await probe.ping();
        await probe.append(`probe-${randomUUID()}`, [event], 'any');
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  } finally {
    await probe.close();
  }
}

/**
 * Runs `operation` until it does not fail with UnavailableError, failing after a bound: the first call after a
 * cut connection may fail so (retrying an append with the same events and expectation is safe: the server
 * recognises a repeated append as written).
 */
export async function untilUp<T>(operation: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await operation();
    } catch (error) {
      if (!(error instanceof UnavailableError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
