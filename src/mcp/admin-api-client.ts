/** One request to the admin API, as a sender performs it. */
export interface AdminHttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | FormData;
}

export interface AdminHttpResponse {
  status: number;
  text: string;
  retryAfter: string | null;
}

/** Performs a request: global fetch for the stdio server, a loopback request for the service's own /admin/v1/mcp. */
export type AdminSender = (request: AdminHttpRequest) => Promise<AdminHttpResponse>;

/** An answer of the admin API outside 2xx, in the spec's envelope: code, message, hint, retryable. */
export class AdminApiError extends Error {
  override name = 'AdminApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
    readonly retryable?: boolean,
    readonly retryAfter?: string,
    /** The answer's JSON body when it was not an error envelope (a 301's). */
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** The service could not be reached at all (refused, reset, timeout). */
export class AdminApiUnreachableError extends Error {
  override name = 'AdminApiUnreachableError';
}

export interface AdminApiClientOptions {
  /** The admin API base, ending in /admin: requests go to `${adminBase}/v1${path}`. */
  adminBase: string;
  agentKey?: string | undefined;
  /** A console user session and the project it acts in (sent as X-Project-Id). */
  session?: { token: string; projectId: string } | undefined;
  send?: AdminSender;
  /** Per request; default 120 000 ms (uploads and translations take time). */
  timeoutMs?: number;
}

export type Credential = 'default' | 'session' | 'none';

export interface RequestOptions {
  body?: unknown;
  /** A multipart body (stdio uploads from a file path). */
  form?: FormData;
  query?: Record<string, string | number | boolean | undefined>;
  /** 'default': the agent key, or the session when there is no key; 'session': the user session only; 'none': no credentials. */
  as?: Credential;
}

/**
 * The admin API over HTTP, for the MCP tools: JSON in, JSON out, errors as AdminApiError carrying the
 * service's envelope. It holds the credentials and never puts them in an error or a message.
 */
export class AdminApiClient {
  readonly adminBase: string;
  readonly #agentKey: string | undefined;
  readonly #session: { token: string; projectId: string } | undefined;
  readonly #send: AdminSender;
  readonly #timeoutMs: number;

  constructor(options: AdminApiClientOptions) {
    this.adminBase = options.adminBase.replace(/\/+$/, '');
    this.#agentKey = options.agentKey;
    this.#session = options.session;
    this.#timeoutMs = options.timeoutMs ?? 120_000;
    this.#send = options.send ?? fetchSender(this.#timeoutMs);
  }

  get hasAgentKey(): boolean {
    return this.#agentKey !== undefined;
  }

  get hasSession(): boolean {
    return this.#session !== undefined;
  }

  /** The session's project, when a session is configured. */
  get sessionProjectId(): string | undefined {
    return this.#session?.projectId;
  }

  get<T = Record<string, unknown>>(path: string, options: Omit<RequestOptions, 'body' | 'form'> = {}): Promise<T> {
    return this.request<T>('GET', path, options);
  }

  async request<T = Record<string, unknown>>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const query = Object.entries(options.query ?? {}).filter((e): e is [string, string | number | boolean] => e[1] !== undefined);
    const search = query.length === 0 ? '' : `?${new URLSearchParams(query.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
    const headers: Record<string, string> = { Accept: 'application/json', ...this.#credentials(options.as ?? 'default') };
    let body: string | FormData | undefined;
    if (options.form) {
      body = options.form;
    } else if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const url = `${this.adminBase}/v1${path}${search}`;
    let response: AdminHttpResponse;
    try {
      response = await this.#send({ method, url, headers, ...(body === undefined ? {} : { body }) });
    } catch (error) {
      const reason = describeNetworkError(error);
      throw new AdminApiUnreachableError(`The admin API at ${this.adminBase} could not be reached: ${reason}.`);
    }
    const parsed = parseJson(response.text);
    if (response.status >= 200 && response.status < 300) return (parsed ?? {}) as T;
    const envelope = (parsed as { error?: { code?: unknown; message?: unknown; hint?: unknown; retryable?: unknown } } | undefined)?.error;
    if (envelope && typeof envelope.code === 'string' && typeof envelope.message === 'string') {
      throw new AdminApiError(
        response.status,
        envelope.code,
        envelope.message,
        typeof envelope.hint === 'string' ? envelope.hint : undefined,
        typeof envelope.retryable === 'boolean' ? envelope.retryable : undefined,
        response.retryAfter ?? undefined,
      );
    }
    throw new AdminApiError(response.status, `HTTP_${response.status}`, `The admin API answered HTTP ${response.status} without an error envelope${response.status === 404 ? ': is ANNALS_ADMIN_BASE the service\'s /admin base?' : '.'}`, undefined, undefined, undefined, parsed);
  }

  #credentials(as: Credential): Record<string, string> {
    if (as === 'none') return {};
    if (as === 'session' || this.#agentKey === undefined) {
      if (!this.#session) return {};
      return { Authorization: `Bearer ${this.#session.token}`, 'X-Project-Id': this.#session.projectId };
    }
    return { Authorization: `Bearer ${this.#agentKey}` };
  }
}

/** Global fetch with a deadline per request. */
export function fetchSender(timeoutMs: number): AdminSender {
  return async (request) => {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, text: await response.text(), retryAfter: response.headers.get('retry-after') };
  };
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describeNetworkError(error: unknown): string {
  const e = error as { name?: string; code?: string; cause?: { code?: string; message?: string }; message?: string };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'no answer in time';
  const code = e?.cause?.code ?? e?.code;
  if (code) return code;
  return e?.cause?.message ?? e?.message ?? String(error);
}
