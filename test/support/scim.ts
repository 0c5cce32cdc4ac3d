// SCIM test helpers: a token issued through the API (as an administrator would) and a client speaking
// application/scim+json with it, as an identity provider does.
import type { ApiClient } from './client.js';

export interface ScimAnswer<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function issueScimToken(
  api: ApiClient,
  body: { orgId?: string; name?: string; defaultRoleId: string; sendInvitations?: boolean },
) {
  const res = await api.post('/scim-tokens', { name: `IdP ${Math.random().toString(36).slice(2, 8)}`, ...body });
  if (res.status !== 201) throw new Error(`scim token: ${res.status} ${res.text}`);
  return res.body as { id: string; token: string; orgId: string | null; partnerId: string; hint: string };
}

export class ScimClient {
  constructor(
    readonly baseUrl: string,
    readonly token: string,
  ) {}

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ScimAnswer<T>> {
    const res = await fetch(`${this.baseUrl}/scim/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        accept: 'application/scim+json',
        ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  get = <T = any>(path: string, headers?: Record<string, string>) => this.request<T>('GET', path, undefined, headers);
  post = <T = any>(path: string, body: unknown, headers?: Record<string, string>) =>
    this.request<T>('POST', path, body, headers);
  put = <T = any>(path: string, body: unknown, headers?: Record<string, string>) =>
    this.request<T>('PUT', path, body, headers);
  patch = <T = any>(path: string, body: unknown, headers?: Record<string, string>) =>
    this.request<T>('PATCH', path, body, headers);
  delete = <T = any>(path: string, headers?: Record<string, string>) =>
    this.request<T>('DELETE', path, undefined, headers);
}

export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const GROUP_EXT = 'urn:gatehouse:params:scim:schemas:extension:2.0:Group';

/** A SCIM error answer: the status, as a string too, and the scimType where one applies. */
export function expectScimError(res: ScimAnswer, status: number, scimType?: string) {
  const ok =
    res.status === status &&
    res.body?.schemas?.[0] === SCIM_ERROR &&
    res.body.status === String(status) &&
    (scimType === undefined || res.body.scimType === scimType);
  if (!ok) throw new Error(`expected SCIM error ${status} ${scimType ?? ''}, got ${res.status} ${res.text}`);
}
