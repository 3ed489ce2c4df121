import { AnnalsApiError, createAdminClient, type AdminClient } from '@annals/client';
import type { Asset } from './shapes.ts';

/**
 * Every call the console makes to the admin API goes through this module, on the typed client
 * `@annals/client` (generated from the service's OpenAPI document): paths, parameters, bodies and answers
 * are checked by the type checker. Errors are AnnalsApiError (code, message, hint, retryable).
 */
export { AnnalsApiError as ApiError };
export type ConsoleClient = AdminClient;

export interface ConsoleClientOptions {
  sessionToken?: string;
  projectId?: string;
  /** Told of every 401 answer (an expired or revoked session), before the call rejects. */
  onUnauthorized?: () => void;
}

export function createConsoleClient(options: ConsoleClientOptions): ConsoleClient {
  return createAdminClient({
    // The page's own origin.
    serviceUrl: '',
    ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}),
    ...(options.projectId ? { projectId: options.projectId } : {}),
    // A person is waiting: a 429 is shown with its message at once rather than waited out.
    retry: { maxRetries: 0 },
    fetch: async (request) => {
      const response = await fetch(request);
      if (response.status === 401) options.onUnauthorized?.();
      return response;
    },
  });
}

function authHeaders(options: ConsoleClientOptions): Record<string, string> {
  return {
    ...(options.sessionToken ? { Authorization: `Bearer ${options.sessionToken}` } : {}),
    ...(options.projectId ? { 'X-Project-Id': options.projectId } : {}),
  };
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
 * progress, so this one call uses XMLHttpRequest.
 */
export function uploadMedia(options: ConsoleClientOptions, file: File, onProgress: (fraction: number) => void): Promise<Asset> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/admin/v1/media');
    for (const [name, value] of Object.entries(authHeaders(options))) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('Idempotency-Key', crypto.randomUUID());
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(JSON.parse(xhr.responseText));
        return;
      }
      if (xhr.status === 401) options.onUnauthorized?.();
      reject(uploadErrorOf(xhr.status, xhr.responseText));
    };
    xhr.onerror = () => reject(new AnnalsApiError({ status: 0, code: 'NETWORK_ERROR', message: 'The upload could not reach the service.', request: 'POST /admin/v1/media' }));
    const form = new FormData();
    form.append('file', file, file.name);
    form.append('fileName', file.name);
    xhr.send(form);
  });
}

/** Sign-in and the login page's branding: the two calls made without a session. */
export async function signIn(body: { email: string; password: string; projectId?: string }) {
  const session = await createConsoleClient({}).POST('/auth/login', { body });
  return { ...session, token: session.token ?? '' };
}

export async function loginBranding(projectId: string) {
  return createConsoleClient({}).GET('/projects/{projectId}/login-branding', { params: { path: { projectId } } });
}

export type SessionUser = Awaited<ReturnType<typeof signIn>>['user'];
