import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { createConsoleClient, type ConsoleClient, type ConsoleClientOptions, type SessionUser } from '../api/admin-client.ts';

/**
 * The console session: the token from sign-in, kept in memory only (never in storage an injected script
 * could read). When the service answers 401 or the token's time is up, the session is marked expired: the
 * pages stay mounted under a sign-in dialog, so nothing typed is lost, and the calls run again after it.
 */
export interface Session {
  token: string;
  expiresAt: string;
  user: SessionUser;
}

interface SessionState {
  session: Session | null;
  expired: boolean;
  signedIn(session: Session): void;
  signOut(): Promise<void>;
  markExpired(): void;
  /** The client for a project (or none, for the calls outside one). */
  clientFor(projectId?: string): ConsoleClient;
  clientOptions(projectId?: string): ConsoleClientOptions;
}

const SessionContext = createContext<SessionState | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [session, setSession] = useState<Session | null>(null);
  const [expired, setExpired] = useState(false);
  const markExpired = useCallback(() => setExpired(true), []);

  useEffect(() => {
    if (!session) return;
    const timer = setTimeout(markExpired, Math.max(0, Date.parse(session.expiresAt) - Date.now()));
    return () => clearTimeout(timer);
  }, [session, markExpired]);

  const value = useMemo<SessionState>(() => {
    const clientOptions = (projectId?: string): ConsoleClientOptions => ({
      ...(session ? { sessionToken: session.token } : {}),
      ...(projectId ? { projectId } : {}),
      onUnauthorized: markExpired,
    });
    return {
      session,
      expired,
      signedIn(next) {
        const wasExpired = expired;
        setSession(next);
        setExpired(false);
        // Calls refused while the session was gone run again with the new one.
        if (wasExpired) void queryClient.invalidateQueries();
      },
      async signOut() {
        // The service refuses the token from now on (POST /auth/logout); the page forgets it either way.
        if (session) await createConsoleClient(clientOptions()).POST('/auth/logout').catch(() => undefined);
        setSession(null);
        setExpired(false);
        queryClient.clear();
      },
      markExpired,
      clientOptions,
      clientFor: (projectId) => createConsoleClient(clientOptions(projectId)),
    };
  }, [session, expired, markExpired, queryClient]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}
