import { redactUrl } from '../logging/redact-url.ts';

/** One dependency's state, as /readyz reports it. */
export interface CheckResult {
  ok: boolean;
  /** Short, human-readable; never secrets (URL credentials are stripped from failure messages). */
  detail?: string;
  /** For projections: events behind the log head. */
  lagEvents?: number;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckResult>;
}

/** What the health routes call on GET /readyz. */
export type ReadinessProbe = () => Promise<Readiness>;

/** One named check: resolves its result; throwing or timing out counts as failed. */
export type ReadinessCheck = () => CheckResult | Promise<CheckResult>;

export const DEFAULT_CHECK_TIMEOUT_MS = 2000;

/**
 * A probe running every check concurrently, each bounded by `timeoutMs`: ready when all are ok. A check that
 * throws or times out is reported `{ok: false, detail: <short message>}` without affecting the others.
 *
 *   readinessFromChecks({
 *     eventStore: async () => { await store.ping(); return { ok: true }; },
 *     projections: async () => { const lag = await engine.maxLag(); return { ok: lag <= 1000, lagEvents: lag }; },
 *   })
 */
export function readinessFromChecks(
  checks: Record<string, ReadinessCheck>,
  options: { timeoutMs?: number } = {},
): ReadinessProbe {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  return async () => {
    const names = Object.keys(checks);
    const results = await Promise.all(
      names.map(async (name): Promise<CheckResult> => {
        try {
          return await withTimeout(async () => checks[name]!(), timeoutMs, `check timed out after ${timeoutMs} ms`);
        } catch (error) {
          return { ok: false, detail: failureDetail(error) };
        }
      }),
    );
    const report: Record<string, CheckResult> = {};
    names.forEach((name, index) => {
      report[name] = results[index]!;
    });
    return { ready: results.every((result) => result.ok), checks: report };
  };
}

/** A thrown value as a short message fit for a health response: no URL credentials, at most 200 characters. */
export function failureDetail(error: unknown): string {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const clean = redactUrl(message).replace(/\s+/g, ' ').trim();
  return clean.length <= 200 ? clean : `${clean.slice(0, 199)}…`;
}

/** Runs `task`, rejecting with `message` if it has not settled within `ms`. */
export async function withTimeout<T>(task: () => Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([task(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
