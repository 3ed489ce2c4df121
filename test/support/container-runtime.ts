/**
 * Suites that need a server run in a container (EventStoreDB, MongoDB, MinIO) use this to decide, at load
 * time, whether they can run: against an existing server named by an environment variable, against a
 * container started with testcontainers, or not at all, in which case every test is reported pending with
 * the reason in its title (never as passed).
 */
export type ServerTarget =
  | { kind: 'existing'; url: string }
  | { kind: 'container' }
  | { kind: 'pending'; reason: string };

let runtimeProbe: Promise<string | null> | undefined;

/** Resolves to null when a container runtime answers, or to the reason it does not. */
export function probeContainerRuntime(): Promise<string | null> {
  runtimeProbe ??= (async () => {
    try {
      const { getContainerRuntimeClient } = await import('testcontainers');
      await getContainerRuntimeClient();
      return null;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return `no container runtime (${message.split('\n')[0]})`;
    }
  })();
  return runtimeProbe;
}

export async function resolveServerTarget(envVariable: string): Promise<ServerTarget> {
  const url = process.env[envVariable];
  if (url) return { kind: 'existing', url };
  const missing = await probeContainerRuntime();
  if (missing) return { kind: 'pending', reason: `${missing}; set ${envVariable} to use an existing server` };
  return { kind: 'container' };
}

/** Title suffix that makes the pending reason visible in the test output. */
export function pendingTitle(title: string, target: ServerTarget): string {
  return target.kind === 'pending' ? `${title} [pending: ${target.reason}]` : title;
}
