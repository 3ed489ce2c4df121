import { createContext, useCallback, useContext, useEffect, useMemo, useState, useSyncExternalStore, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { createConsoleClient, currentSession, type ConsoleClient, type ConsoleClientOptions } from '../api/admin-client.ts';
import { SessionGate, type Session, type SessionEnd } from './session-gate.ts';
import { forgetKeptInput } from '../fields/kept-input.ts';
import { builtInGrants } from './grants.ts';

export type { Session } from './session-gate.ts';

/**
 * The console session: the service's HttpOnly, SameSite=Strict cookie, which no script here can read and which
 * survives reloads, new tabs and deep links. At start the page asks the service for the session its cookie
 * holds (GET /auth/session). When the session expires or is signed out, the page stays as it is under a sign-in
 * dialog and its calls wait (session-gate.ts); signing in again sends them once more with the new session, so
 * nothing typed and no save is lost. Tabs tell each other of sign-ins and sign-outs (BroadcastChannel).
 */
interface SessionState {
  status: 'checking' | 'signed-in' | 'signed-out';
  session: Session | null;
  /** Why a signed-in page waits for a sign-in again, or null. */
  ended: SessionEnd | null;
  signedIn(session: Session): void;
  signOut(): Promise<void>;
  /** The client for a project (or none, for the calls outside one). */
  clientFor(projectId?: string): ConsoleClient;
  clientOptions(projectId?: string): ConsoleClientOptions;
}

const SessionContext = createContext<SessionState | null>(null);
const CHANNEL = 'annals-console-session';
type TabMessage = { type: 'signed-in' } | { type: 'signed-out' };

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [gate] = useState(() => new SessionGate());
  const snapshot = useSyncExternalStore(gate.subscribe, gate.getSnapshot);
  const [channel] = useState(() => (typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(CHANNEL)));

  /** Asks the service which session the cookie holds now; false when there is none. */
  const recheck = useCallback(async (): Promise<boolean> => {
    const found = await currentSession().catch(() => null);
    if (found) gate.begin(found);
    return found !== null;
  }, [gate]);

  useEffect(() => {
    void currentSession()
      .catch(() => null)
      .then((found) => {
        if (!found) return gate.none();
        gate.begin(found);
        // A page that starts signed in may be where a sign-in ended (single sign-on in a tab of its own): tabs
        // waiting for a sign-in look again.
        channel?.postMessage({ type: 'signed-in' } satisfies TabMessage);
      });
  }, [gate, channel]);

  // Another tab signed in (this one may be waiting for it) or out (this one's session is gone too).
  useEffect(() => {
    if (!channel) return;
    const onMessage = (event: MessageEvent<TabMessage>) => {
      if (event.data.type === 'signed-out') gate.end('signed-out');
      else if (gate.snapshot.status !== 'signed-in' || gate.snapshot.ended) void recheck();
    };
    channel.addEventListener('message', onMessage);
    return () => channel.removeEventListener('message', onMessage);
  }, [channel, gate, recheck]);

  // The session's time is up: the dialog opens before the next call finds out.
  const session = snapshot.session;
  useEffect(() => {
    if (!session || snapshot.ended) return;
    const timer = setTimeout(() => gate.end('expired'), Math.min(2 ** 31 - 1, Math.max(0, Date.parse(session.expiresAt) - Date.now())));
    return () => clearTimeout(timer);
  }, [session, snapshot.ended, gate]);

  // The gate is the page's for good: clients made once keep working across sessions.
  const clientOptions = useCallback((projectId?: string): ConsoleClientOptions => ({ gate, ...(projectId ? { projectId } : {}) }), [gate]);
  const clientFor = useCallback((projectId?: string) => createConsoleClient(clientOptions(projectId)), [clientOptions]);

  const value = useMemo<SessionState>(() => {
    return {
      ...snapshot,
      signedIn(next) {
        const wasAnotherUser = snapshot.session !== null && snapshot.session.user.id !== next.user.id;
        // Signing in again over the page: what the user could do stands until the service says otherwise (the page stays as it is).
        const held = !wasAnotherUser ? snapshot.session?.grants : undefined;
        gate.begin(!next.grants && held ? { ...next, grants: held } : next);
        if (wasAnotherUser) queryClient.clear();
        channel?.postMessage({ type: 'signed-in' } satisfies TabMessage);
        // What the user may do comes with the session the cookie now holds (the sign-in's answer has none).
        if (!next.grants) {
          void currentSession()
            .catch(() => null)
            .then((found) => gate.granted(next.user.id, found?.user.id === next.user.id && found.grants ? found.grants : builtInGrants(next.user.role)));
        }
      },
      async signOut() {
        // The service refuses the session from now on and clears its cookie (POST /auth/logout).
        await createConsoleClient({ gate, waitForSignIn: false })
          .POST('/auth/logout')
          .catch(() => undefined);
        if (snapshot.session) forgetKeptInput(snapshot.session.user.id);
        gate.signedOut();
        queryClient.clear();
        channel?.postMessage({ type: 'signed-out' } satisfies TabMessage);
      },
      clientOptions,
      clientFor,
    };
  }, [snapshot, gate, queryClient, channel, clientOptions, clientFor]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}
