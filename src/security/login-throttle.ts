import type { Clock } from '../clock.ts';

/**
 * Throttling of console sign-in (password guessing), in memory per process and therefore best effort, like
 * the agent rate limit. Exponential backoff rather than lockout: after a few free failures each further
 * attempt must wait twice as long as the one before, up to a cap, and a throttled attempt is refused before
 * its password is checked (a 429 with Retry-After), so guessing costs the guesser time and the server nothing.
 *
 * Three counters, each with its own policy:
 * - the client address: many accounts tried from one address (credential stuffing);
 * - the account and address together: one account guessed from one address;
 * - the account from anywhere: one account guessed from many addresses.
 * The account-wide counter does not apply to an address that signed in to that account successfully before
 * (remembered for `trustedForMs`), so a distributed attack on an account does not lock its owner out of
 * their usual network; from a new address the owner waits at most that counter's cap (60 s by default).
 *
 * An attempt counts as a failure when it starts (so parallel guesses cannot all pass before any failure is
 * recorded); a success takes it back and clears the account-and-address counter. Counters are forgotten after
 * `forgetAfterMs` without attempts. Memory is bounded: beyond `maxKeys` the least recently used entries go.
 */
export interface BackoffPolicy {
  /** Failures allowed without any wait. */
  free: number;
  /** Wait after the first failure beyond the free ones; doubles with each further failure. */
  baseMs: number;
  /** Longest wait. */
  capMs: number;
  /** A counter with no attempt for this long starts afresh. */
  forgetAfterMs: number;
}

export interface LoginThrottleOptions {
  clock: Clock;
  address?: BackoffPolicy;
  accountAtAddress?: BackoffPolicy;
  account?: BackoffPolicy;
  /** How long a successful sign-in exempts its address from the account-wide counter. Default 30 days. */
  trustedForMs?: number;
  /** Most entries kept per table. Default 100,000. */
  maxKeys?: number;
}

export const DEFAULT_LOGIN_BACKOFF = {
  address: { free: 20, baseMs: 1000, capMs: 5 * 60_000, forgetAfterMs: 60 * 60_000 },
  accountAtAddress: { free: 5, baseMs: 1000, capMs: 60_000, forgetAfterMs: 15 * 60_000 },
  account: { free: 20, baseMs: 1000, capMs: 60_000, forgetAfterMs: 15 * 60_000 },
} as const satisfies Record<string, BackoffPolicy>;

export type ThrottleDecision = { allowed: true; attempt: LoginAttempt } | { allowed: false; retryAfterSeconds: number };

/** A sign-in attempt let through: report how it ended. */
export interface LoginAttempt {
  succeeded(): void;
}

interface Counter {
  failures: number;
  lastAt: number;
}

type Table = 'address' | 'accountAtAddress' | 'account';

export class LoginThrottle {
  readonly #clock: Clock;
  readonly #policies: { address: BackoffPolicy; accountAtAddress: BackoffPolicy; account: BackoffPolicy };
  readonly #trustedForMs: number;
  readonly #maxKeys: number;
  readonly #counters = { address: new Map<string, Counter>(), accountAtAddress: new Map<string, Counter>(), account: new Map<string, Counter>() };
  /** `account\u0000address` -> until when the address is exempt from the account-wide counter. */
  readonly #trusted = new Map<string, number>();

  constructor(options: LoginThrottleOptions) {
    this.#clock = options.clock;
    this.#policies = {
      address: options.address ?? DEFAULT_LOGIN_BACKOFF.address,
      accountAtAddress: options.accountAtAddress ?? DEFAULT_LOGIN_BACKOFF.accountAtAddress,
      account: options.account ?? DEFAULT_LOGIN_BACKOFF.account,
    };
    this.#trustedForMs = options.trustedForMs ?? 30 * 24 * 60 * 60_000;
    this.#maxKeys = options.maxKeys ?? 100_000;
  }

  /**
   * Whether an attempt to sign in to `account` (the normalised e-mail) from `address` may go ahead now. When
   * it may, it is counted as a failure until `succeeded()` is called.
   */
  begin(account: string, address: string): ThrottleDecision {
    const now = this.#clock.now().getTime();
    const pair = `${account}\u0000${address}`;
    const keys: Array<[Table, string]> = [
      ['address', address],
      ['accountAtAddress', pair],
    ];
    const trustedUntil = this.#trusted.get(pair);
    if (trustedUntil === undefined || trustedUntil <= now) keys.push(['account', account]);
    let waitMs = 0;
    for (const [table, key] of keys) waitMs = Math.max(waitMs, this.#waitMs(table, key, now));
    if (waitMs > 0) return { allowed: false, retryAfterSeconds: Math.ceil(waitMs / 1000) };
    this.#count('address', address, now);
    this.#count('accountAtAddress', pair, now);
    this.#count('account', account, now);
    let settled = false;
    return {
      allowed: true,
      attempt: {
        succeeded: () => {
          if (settled) return;
          settled = true;
          this.#counters.accountAtAddress.delete(pair);
          this.#uncount('address', address);
          this.#uncount('account', account);
          this.#trusted.delete(pair);
          this.#trusted.set(pair, this.#clock.now().getTime() + this.#trustedForMs);
          this.#bound(this.#trusted);
        },
      },
    };
  }

  /** Entries held, per table (for tests and metrics). */
  get size(): { address: number; accountAtAddress: number; account: number; trusted: number } {
    return { address: this.#counters.address.size, accountAtAddress: this.#counters.accountAtAddress.size, account: this.#counters.account.size, trusted: this.#trusted.size };
  }

  #waitMs(table: Table, key: string, now: number): number {
    const counter = this.#live(table, key, now);
    if (!counter) return 0;
    const policy = this.#policies[table];
    const beyond = counter.failures - policy.free;
    if (beyond <= 0) return 0;
    const delay = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(beyond - 1, 40));
    return Math.max(0, counter.lastAt + delay - now);
  }

  #count(table: Table, key: string, now: number): void {
    const counters = this.#counters[table];
    const counter = this.#live(table, key, now) ?? { failures: 0, lastAt: now };
    counters.delete(key); // re-inserted: Map order is least recently used first
    counters.set(key, { failures: counter.failures + 1, lastAt: now });
    this.#bound(counters);
  }

  #uncount(table: 'address' | 'account', key: string): void {
    const counter = this.#counters[table].get(key);
    if (!counter) return;
    if (counter.failures <= 1) this.#counters[table].delete(key);
    else counter.failures -= 1;
  }

  /** The counter, or undefined when there is none or it has been idle long enough to be forgotten. */
  #live(table: Table, key: string, now: number): Counter | undefined {
    const counter = this.#counters[table].get(key);
    if (counter && now - counter.lastAt >= this.#policies[table].forgetAfterMs) {
      this.#counters[table].delete(key);
      return undefined;
    }
    return counter;
  }

  #bound(map: Map<string, unknown>): void {
    while (map.size > this.#maxKeys) map.delete(map.keys().next().value as string);
  }
}
