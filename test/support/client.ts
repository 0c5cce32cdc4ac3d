// A typed HTTP client for the public API, with a cookie jar: what a browser or the console would send.
// Typed per route from the generated OpenAPI types (./api-types.ts): an unknown path (checked per distinct path
// type, `Checked`, rather than against a union of every pattern: a third of the compile cost) or a body the route
// does not take fails to compile; the response body is the route's success body with the error envelope's fields optional.
// `api.raw` is the same client untyped, for tests that deliberately send what no route takes.
import type { BodyArgs, Checked, Method, RequestBody, ResponseBody } from './api-types.js';

export type { ErrorFields } from './api-types.js';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

/** The answer of a typed call: the body of the route's 2xx answer, the error envelope's fields optional. */
export type RouteResponse<M extends Method, P extends string> = ApiResponse<ResponseBody<M, P>>;

export interface ErrorBody {
  error: string;
  message: string;
  code: string;
  [extra: string]: unknown;
}

export interface RequestOptions {
  /** Sent as-is (no JSON encoding), with the content type below. */
  rawBody?: string | Buffer;
  contentType?: string;
  token?: string | null;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
}

export interface RawRequestOptions extends RequestOptions {
  body?: unknown;
}

/** The client untyped: any method, path and body; the body of the answer is any. */
export interface RawClient {
  request(method: string, path: string, opts?: RawRequestOptions): Promise<ApiResponse<any>>;
  get(path: string, opts?: RawRequestOptions): Promise<ApiResponse<any>>;
  post(path: string, body?: unknown, opts?: RequestOptions): Promise<ApiResponse<any>>;
  patch(path: string, body?: unknown, opts?: RequestOptions): Promise<ApiResponse<any>>;
  put(path: string, body?: unknown, opts?: RequestOptions): Promise<ApiResponse<any>>;
  delete(path: string, opts?: RawRequestOptions): Promise<ApiResponse<any>>;
}

export class ApiClient {
  readonly cookies = new Map<string, string>();
  token: string | null = null;
  /** This client (same cookie jar and token) untyped: for paths no route has and bodies no route takes. */
  readonly raw: RawClient = {
    request: (method, path, opts) => this.send(method, path, opts),
    get: (path, opts) => this.send('GET', path, opts),
    post: (path, body, opts) => this.send('POST', path, { ...opts, body }),
    patch: (path, body, opts) => this.send('PATCH', path, { ...opts, body }),
    put: (path, body, opts) => this.send('PUT', path, { ...opts, body }),
    delete: (path, opts) => this.send('DELETE', path, opts),
  };

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

  /** Every call, typed or raw, goes through here (a subclass may add headers). */
  protected async send(method: string, path: string, opts: RawRequestOptions = {}): Promise<ApiResponse<any>> {
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
    return { status: res.status, body: parsed, headers: res.headers, text };
  }

  /** A typed call with the method as an argument (the body in `opts.body`, or `opts.rawBody` sent as it is). */
  request<U extends Uppercase<Method>, P extends string>(
    method: U,
    path: Checked<Lowercase<U>, P>,
    opts?: RequestOptions & { body?: RequestBody<Lowercase<U>, P> },
  ): Promise<RouteResponse<Lowercase<U>, P>> {
    return this.send(method, path as string, opts);
  }

  get<P extends string>(path: Checked<'get', P>, opts?: RequestOptions): Promise<RouteResponse<'get', P>> {
    return this.send('GET', path, opts);
  }
  post<P extends string>(
    path: Checked<'post', P>,
    ...[body, opts]: BodyArgs<'post', P, RequestOptions>
  ): Promise<RouteResponse<'post', P>> {
    return this.send('POST', path, { ...opts, body });
  }
  patch<P extends string>(
    path: Checked<'patch', P>,
    ...[body, opts]: BodyArgs<'patch', P, RequestOptions>
  ): Promise<RouteResponse<'patch', P>> {
    return this.send('PATCH', path, { ...opts, body });
  }
  put<P extends string>(
    path: Checked<'put', P>,
    ...[body, opts]: BodyArgs<'put', P, RequestOptions>
  ): Promise<RouteResponse<'put', P>> {
    return this.send('PUT', path, { ...opts, body });
  }
  /** DELETE sends no body, unless the route takes one (`opts.body`: a confirmation). */
  delete<P extends string>(
    path: Checked<'delete', P>,
    opts?: RequestOptions & { body?: RequestBody<'delete', P> },
  ): Promise<RouteResponse<'delete', P>> {
    return this.send('DELETE', path, opts);
  }

  // Shorthands for routes the tests use often.
  me() {
    return this.get('/auth/me');
  }
  usersMe() {
    return this.get('/users/me');
  }
  permissionCatalog() {
    return this.get('/permissions/catalog');
  }
}

/**
 * The error envelope of an answer with its undocumented extra fields readable (unknown), e.g. step_up_required's
 * `methods`; the documented ones are typed on `res.body` already.
 */
export function errorBody(res: ApiResponse): ErrorBody {
  return res.body as ErrorBody;
}

/** Fails the test unless the answer has the status; returns it for reading. */
export function expectStatus<R extends ApiResponse>(res: R, status: number): R {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text.slice(0, 500)}`);
  return res;
}
