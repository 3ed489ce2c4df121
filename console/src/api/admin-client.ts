import { AnnalsApiError, createAdminClient, type AdminClient, type AdminSchema } from '@annals/client';
import type { Asset } from './shapes.ts';
import type { Session, SessionGate } from '../session/session-gate.ts';

/**
 * Every call the console makes to the admin API goes through this module, on the typed client
 * `@annals/client` (generated from the service's OpenAPI document): paths, parameters, bodies and answers
 * are checked by the type checker. Errors are AnnalsApiError (code, message, hint, retryable).
 *
 * The session is the service's HttpOnly cookie, which the browser sends with every call to its own origin;
 * no token is held here. Writes carry the session's CSRF token (X-CSRF-Token) from the session gate, read at
 * the moment each request is sent. A call answered 401 waits at the gate while the user signs in again over
 * the page, then is sent again as it was, with the new session's token.
 */
export { AnnalsApiError as ApiError };
export type ConsoleClient = AdminClient;

export interface ConsoleClientOptions {
  projectId?: string;
  /** The page's session: CSRF tokens, and the wait for a sign-in again after a 401. Absent: calls made without a session. */
  gate?: SessionGate;
  /** false: a 401 is answered at once (signing out), not waited out. Default true with a gate. */
  waitForSignIn?: boolean;
  /**
   * The calls may be refused 401 for what they carry (a password asked again, a code), not for the session: a
   * 401 waits for a sign-in again only when the session is gone too (GET /auth/session says so).
   */
  ownRefusals?: boolean;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The CSRF header of a write, from the gate's session as it is now. */
function csrfHeaders(method: string, gate: SessionGate | undefined): Record<string, string> {
  const token = gate?.csrfToken();
  return token && !SAFE_METHODS.has(method.toUpperCase()) ? { 'X-CSRF-Token': token } : {};
}

export function createConsoleClient(options: ConsoleClientOptions): ConsoleClient {
  const { gate, waitForSignIn = true } = options;
  return createAdminClient({
    // The page's own origin.
    serviceUrl: '',
    ...(options.projectId ? { projectId: options.projectId } : {}),
    // A person is waiting: a 429 is shown with its message at once rather than waited out.
    retry: { maxRetries: 0 },
    fetch: async (request) => {
      for (;;) {
        const attempt = request.clone();
        for (const [name, value] of Object.entries(csrfHeaders(attempt.method, gate))) attempt.headers.set(name, value);
        const response = await fetch(attempt, { credentials: 'same-origin' });
        if (response.status !== 401 || !gate || !waitForSignIn) return response;
        // A wrong password or code, with the session still good: the call's own answer.
        if (options.ownRefusals && (await currentSession().catch(() => null)) !== null) return response;
        // Signed in again: the same request once more, with the new session.
        if (!(await gate.unauthorized())) return response;
      }
    },
  });
}

/** The error of a failed upload, from its envelope. */
function uploadErrorOf(status: number, text: string): AnnalsApiError {
  let envelope: { error?: { code: string; message: string; hint?: string; retryable?: boolean } } = {};
  try {
    envelope = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  const e = envelope.error;
  return new AnnalsApiError({ status, code: e?.code ?? `HTTP_${status}`, message: e?.message ?? `HTTP ${status}`, hint: e?.hint, retryable: e?.retryable, request: 'POST /admin/v1/media' });
}

/**
 * Uploads a file to the media library (multipart, field "file") with progress: fetch cannot report upload
 * progress, so this one call uses XMLHttpRequest. One Idempotency-Key for every attempt: an upload sent again
 * after a sign-in creates one asset.
 */
export async function uploadMedia(options: ConsoleClientOptions, file: File, onProgress: (fraction: number) => void, folder = ''): Promise<Asset> {
  const idempotencyKey = crypto.randomUUID();
  for (;;) {
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', '/admin/v1/media');
      if (options.projectId) xhr.setRequestHeader('X-Project-Id', options.projectId);
      for (const [name, value] of Object.entries(csrfHeaders('POST', options.gate))) xhr.setRequestHeader(name, value);
      xhr.setRequestHeader('Idempotency-Key', idempotencyKey);
      xhr.upload.onprogress = (event) => {
        if (event.lengthComputable) onProgress(event.loaded / event.total);
      };
      xhr.onload = () => resolve({ status: xhr.status, text: xhr.responseText });
      xhr.onerror = () => reject(new AnnalsApiError({ status: 0, code: 'NETWORK_ERROR', message: 'The upload could not reach the service.', request: 'POST /admin/v1/media' }));
      const form = new FormData();
      form.append('file', file, file.name);
      form.append('fileName', file.name);
      if (folder) form.append('folder', folder);
      xhr.send(form);
    });
    if (answer.status >= 200 && answer.status < 300) {
      onProgress(1);
      return JSON.parse(answer.text) as Asset;
    }
    if (answer.status === 401 && options.gate && (await options.gate.unauthorized())) continue;
    throw uploadErrorOf(answer.status, answer.text);
  }
}

/** A second factor the password step asks for: the ticket to answer with, and how this person can answer it. */
export type SecondFactorChallenge = AdminSchema<'SecondFactorChallenge'>['secondFactor'];
/** An authenticator app's secret to scan, and the setup token to send back with its first code. */
export type TotpSetup = AdminSchema<'TotpSetup'>;
/** A session begun; recoveryCodes when this sign-in set up the authenticator app the organisation requires (shown once). */
export type SignedIn = Session & { recoveryCodes?: string[] };
/** What the password step answered: the session, or the second factor to give first. */
export type SignInResult = { kind: 'session'; session: SignedIn } | { kind: 'second-factor'; challenge: SecondFactorChallenge };

function signedInOf(session: AdminSchema<'Session'>): SignedIn {
  return { expiresAt: session.expiresAt, user: session.user, csrfToken: session.csrfToken ?? '', ...(session.recoveryCodes ? { recoveryCodes: session.recoveryCodes } : {}) };
}

/** Sign-in (for the session cookie) and the login page's branding: calls made without a session. */
export async function signIn(body: { email: string; password: string; projectId?: string }): Promise<SignInResult> {
  const answer = await createConsoleClient({}).POST('/auth/login', { body: { ...body, cookie: true } });
  if ('secondFactor' in answer) return { kind: 'second-factor', challenge: answer.secondFactor };
  return { kind: 'session', session: signedInOf(answer) };
}

/** The password step's second factor: the app's code, a recovery code or a passkey's answer; the session (its cookie set). */
export async function signInSecondFactor(body: { ticket: string; method: 'totp' | 'recovery-code' | 'passkey'; code?: string; setupToken?: string; passkey?: unknown }): Promise<SignedIn> {
  type Body = { ticket: string; method: 'totp' | 'recovery-code' | 'passkey'; code?: string; setupToken?: string; passkey?: { id: string; rawId: string; type: 'public-key'; response: Record<string, unknown> } };
  return signedInOf(await createConsoleClient({}).POST('/auth/login/second-factor', { body: body as Body }));
}

/** The passkey challenge of a sign-in's second step, and the ticket that carries it (answer with that one). */
export async function signInPasskeyOptions(ticket: string) {
  return createConsoleClient({}).POST('/auth/login/passkey-options', { body: { ticket } });
}

/** An authenticator app to set up on the way in, when the organisation requires a second factor and the person has none. */
export async function signInTotpSetup(ticket: string): Promise<TotpSetup> {
  return createConsoleClient({}).POST('/auth/login/totp-setup', { body: { ticket } });
}

/** The session the browser already holds (its cookie), with what its user may do, or null: asked when the console starts and after a sign-in. */
export async function currentSession() {
  try {
    const session = await createConsoleClient({}).GET('/auth/session');
    return session.cookie && session.csrfToken ? { expiresAt: session.expiresAt, user: session.user, csrfToken: session.csrfToken, grants: session.grants } : null;
  } catch (error) {
    if (error instanceof AnnalsApiError && (error.status === 401 || error.status === 403)) return null;
    throw error;
  }
}

/** Chooses a password with an invitation's link token (no session). */
export async function acceptInvitation(body: { token: string; password: string }) {
  return createConsoleClient({}).POST('/auth/invitations/accept', { body });
}

/** The ways a project's login page signs people in: password, and the organisation's identity provider when set up. */
export async function signInOptions(projectId: string) {
  return createConsoleClient({}).GET('/auth/sign-in-options', { params: { query: { projectId } } });
}

export async function loginBranding(projectId: string) {
  return createConsoleClient({}).GET('/projects/{projectId}/login-branding', { params: { path: { projectId } } });
}


/**
 * Keeps an entry's typing in the working copy as the page goes away (closing the tab, reloading): a keepalive
 * request, which the browser finishes after the page is gone. Nothing waits for its answer.
 */
export function keepOnLeave(api: ConsoleClient, entryId: string, body: { fields: Record<string, unknown>; baseRevision: number }): void {
  void api.PUT('/entries/{entryId}/working-copy', { params: { path: { entryId } }, body, keepalive: true }).catch(() => undefined);
}
