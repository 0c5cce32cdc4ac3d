// A typed HTTP client for the public API, with a cookie jar: what a browser or the console would send.
import type { UserProfile } from '../../src/modules/users/schemas.js';

/** Fields of the error envelope, present on any non-2xx answer. */
export interface ErrorFields {
  code?: string;
  error?: string;
  message?: string;
  details?: any;
  retryAfter?: number;
  errorId?: string;
  enrollUrl?: string;
  allowedMethods?: string[];
}

export interface ApiResponse<T = any> {
  status: number;
  body: T & ErrorFields;
  headers: Headers;
  text: string;
}

export interface ErrorBody {
  error: string;
  message: string;
  code: string;
  [extra: string]: unknown;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is (no JSON encoding), with the content type below. */
  rawBody?: string | Buffer;
  contentType?: string;
  token?: string | null;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
}

export class ApiClient {
  readonly cookies = new Map<string, string>();
  token: string | null = null;

  constructor(readonly baseUrl: string) {}

  /** A client with the same base URL, its own cookie jar and no token. */
  fresh(): ApiClient {
    return new ApiClient(this.baseUrl);
  }

  withToken(token: string | null): ApiClient {
    const c = new ApiClient(this.baseUrl);
    c.token = token;
    return c;
  }

  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = new URL(
      path.startsWith('/api/') || !path.startsWith('/') || path.startsWith('/healthz') ? path : `/api/v1${path}`,
      this.baseUrl,
    );
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? this.token : opts.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (this.cookies.size && !headers.cookie)
      headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | Buffer | undefined;
    if (opts.rawBody !== undefined) {
      body = opts.rawBody;
      if (opts.contentType) headers['content-type'] = opts.contentType;
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
    }
    const res = await fetch(url, { method, headers, body: body as BodyInit | undefined, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (!value || /max-age=0|expires=thu, 01 jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    let parsed: unknown = text;
    // application/json and application/*+json are parsed; JSON Lines (application/x-ndjson, application/jsonl) stay text.
    if (/^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i.test(res.headers.get('content-type') ?? '') && text)
      parsed = JSON.parse(text);
    return { status: res.status, body: parsed as T & ErrorFields, headers: res.headers, text };
  }

  get<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>('GET', path, opts);
  }
  post<T = any>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>('POST', path, { ...opts, body });
  }
  patch<T = any>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>('PATCH', path, { ...opts, body });
  }
  put<T = any>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>('PUT', path, { ...opts, body });
  }
  delete<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>('DELETE', path, opts);
  }

  // Typed helpers for routes the tests use often.
  me() {
    return this.get<UserProfile>('/auth/me');
  }
  usersMe() {
    return this.get<UserProfile>('/users/me');
  }
  permissionCatalog() {
    return this.get<{
      permissions: { resource: string; action: string; description: string }[];
      aliases: Record<string, string>;
    }>('/permissions/catalog');
  }
}
