import type { SessionUser } from '../api/shapes.ts';
import type { Grants } from './grants.ts';

/**
 * The console's session as the page knows it: the user, the expiry and the CSRF token of the session cookie
 * (the cookie itself is HttpOnly: no script here can read it). Every call to the admin API goes through this
 * gate: writes take the CSRF token from it at the moment they are sent, and a call answered 401 (the session
 * expired or was signed out) waits here until someone signs in again over the page, then is sent again with
 * the new session. So a save made as the session ran out is not lost: it completes after the new sign-in.
 */
export interface Session {
  expiresAt: string;
  user: SessionUser;
  csrfToken: string;
  /** What the user may do (GET /auth/session); absent just after a sign-in, whose answer carries none, until asked. */
  grants?: Grants;
}

/** Why the page's session stopped: it expired, or it was signed out (in another tab, or on the service). */
export type SessionEnd = 'expired' | 'signed-out';

export interface SessionSnapshot {
  /** 'checking' while the page asks the service for the session it may already have (a reload, a new tab). */
  status: 'checking' | 'signed-in' | 'signed-out';
  session: Session | null;
  /** Set while a signed-in page waits for its user to sign in again. */
  ended: SessionEnd | null;
}

export class SessionGate {
  #snapshot: SessionSnapshot = { status: 'checking', session: null, ended: null };
  #waiting: Array<(again: boolean) => void> = [];
  #listeners = new Set<() => void>();

  get snapshot(): SessionSnapshot {
    return this.#snapshot;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  getSnapshot = (): SessionSnapshot => this.#snapshot;

  /** The CSRF token writes send now (the newest session's). */
  csrfToken(): string | undefined {
    return this.#snapshot.session?.csrfToken;
  }

  /**
   * A session begins: from the start-up check, a sign-in, or a sign-in again over a page whose session had
   * ended. Calls waiting for it are sent again when it is the same user's; another user's session lets them
   * fail (they were made for someone else).
   */
  begin(session: Session): void {
    const previous = this.#snapshot.session;
    const sameUser = previous === null || previous.user.id === session.user.id;
    this.#set({ status: 'signed-in', session, ended: null });
    this.#release(sameUser);
  }

  /** What the session's user may do, asked after a sign-in (whose answer carries none): set when it is still theirs. */
  granted(userId: string, grants: Grants): void {
    const session = this.#snapshot.session;
    if (session?.user.id !== userId) return;
    this.#set({ ...this.#snapshot, session: { ...session, grants } });
  }

  /** No session: the start-up check found none. */
  none(): void {
    this.#set({ status: 'signed-out', session: null, ended: null });
    this.#release(false);
  }

  /** The session stopped while the page is open: it stays, under a sign-in dialog, and calls wait. */
  end(reason: SessionEnd): void {
    if (this.#snapshot.status !== 'signed-in') return;
    if (this.#snapshot.ended === 'signed-out' && reason === 'expired') return;
    this.#set({ ...this.#snapshot, ended: reason });
  }

  /** Signed out on purpose: the page forgets the session, and waiting calls fail. */
  signedOut(): void {
    this.#set({ status: 'signed-out', session: null, ended: null });
    this.#release(false);
  }

  /**
   * A call was answered 401. Resolves true once a session begins again for the same user (send it again),
   * false when there is nothing to wait for (no session: the 401 stands).
   */
  unauthorized(): Promise<boolean> {
    if (this.#snapshot.status !== 'signed-in') return Promise.resolve(false);
    this.end('expired');
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(again: boolean): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve(again);
  }

  #set(next: SessionSnapshot): void {
    this.#snapshot = next;
    for (const listener of this.#listeners) listener();
  }
}
