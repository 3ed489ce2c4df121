/**
 * Every call the console makes to the admin API goes through this module. Its calls take the OpenAPI
 * path templates and `{params: {path, query}, body}` arguments of openapi-fetch, so the pages read the
 * same as with the generated `@annals/client`.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
    readonly retryable?: boolean,
  ) {
    super(message);
  }
}

export interface CallInit {
  params?: { path?: Record<string, string | number>; query?: Record<string, string | number | boolean | undefined | null> };
  body?: unknown;
}

export interface ConsoleClientOptions {
  sessionToken?: string;
  projectId?: string;
  /** Told of every 401 answer (an expired or revoked session), before the call rejects. */
  onUnauthorized?: (error: ApiError) => void;
}

type Call = (path: string, init?: CallInit) => Promise<any>;
export interface ConsoleClient {
  GET: Call;
  POST: Call;
  PUT: Call;
  PATCH: Call;
  DELETE: Call;
}

const BASE = '/admin/v1';

export function expandPath(path: string, init?: CallInit): string {
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = init?.params?.path?.[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} of ${path}`);
    return encodeURIComponent(String(value));
  });
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(init?.params?.query ?? {})) {
    if (value !== undefined && value !== null && value !== '') query.set(key, String(value));
  }
  const search = query.toString();
  return `${BASE}${filled}${search ? `?${search}` : ''}`;
}

export function authHeaders(options: ConsoleClientOptions): Record<string, string> {
  return {
    ...(options.sessionToken ? { Authorization: `Bearer ${options.sessionToken}` } : {}),
    ...(options.projectId ? { 'X-Project-Id': options.projectId } : {}),
  };
}

/** The error of a failed answer, from its envelope `{error: {code, message, hint?, retryable?}}`. */
export function apiErrorOf(status: number, text: string): ApiError {
  try {
    const body = JSON.parse(text) as { error?: { code: string; message: string; hint?: string; retryable?: boolean } };
    if (body.error?.code) return new ApiError(status, body.error.code, body.error.message, body.error.hint, body.error.retryable);
  } catch {
    /* not JSON */
  }
  return new ApiError(status, `HTTP_${status}`, text.slice(0, 200) || `HTTP ${status}`);
}

export function createConsoleClient(options: ConsoleClientOptions): ConsoleClient {
  const call =
    (method: string): Call =>
    async (path, init) => {
      const hasBody = init?.body !== undefined;
      const response = await fetch(expandPath(path, init), {
        method,
        headers: { ...authHeaders(options), ...(hasBody ? { 'Content-Type': 'application/json' } : {}) },
        ...(hasBody ? { body: JSON.stringify(init!.body) } : {}),
        credentials: 'omit',
      });
      const text = await response.text();
      if (!response.ok) {
        const error = apiErrorOf(response.status, text);
        if (response.status === 401) options.onUnauthorized?.(error);
        throw error;
      }
      return text ? JSON.parse(text) : undefined;
    };
  return { GET: call('GET'), POST: call('POST'), PUT: call('PUT'), PATCH: call('PATCH'), DELETE: call('DELETE') };
}

/**
 * Uploads a file to the media library (multipart, field "file") with progress: fetch cannot report upload
 * progress, so this one call uses XMLHttpRequest.
 */
export function uploadMedia(options: ConsoleClientOptions, file: File, onProgress: (fraction: number) => void): Promise<any> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${BASE}/media`);
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
      const error = apiErrorOf(xhr.status, xhr.responseText);
      if (xhr.status === 401) options.onUnauthorized?.(error);
      reject(error);
    };
    xhr.onerror = () => reject(new ApiError(0, 'NETWORK_ERROR', 'The upload could not reach the service.'));
    const form = new FormData();
    form.append('file', file, file.name);
    form.append('fileName', file.name);
    xhr.send(form);
  });
}

/** Sign-in and the login page's branding: the two calls made without a session. */
export async function signIn(body: { email: string; password: string; projectId?: string }): Promise<{ token: string; expiresAt: string; user: SessionUser }> {
  return createConsoleClient({}).POST('/auth/login', { body });
}

export async function loginBranding(projectId: string): Promise<LoginBranding> {
  return createConsoleClient({}).GET('/projects/{projectId}/login-branding', { params: { path: { projectId } } });
}

export interface SessionUser {
  id: string;
  tenantId: string;
  email: string;
  role: 'tenant_admin' | 'tenant_user';
}

export interface LoginBranding {
  projectId: string;
  projectName: string;
  logoUrl: string | null;
  primaryColor: string | null;
  accentColor: string | null;
  message: string | null;
}
