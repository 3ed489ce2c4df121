/**
 * A KurrentDB / EventStoreDB server for the suites that need a real one: a fresh single-node container
 * started with testcontainers (in-memory, insecure). Suites decide with resolveServerTarget whether they
 * run against it, against EVENTSTORE_CONNECTION_STRING, or are pending.
 */
import type { StartedTestContainer } from 'testcontainers';

export const EVENTSTORE_IMAGE = process.env.EVENTSTORE_IMAGE ?? 'eventstore/eventstore:24.10';

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
