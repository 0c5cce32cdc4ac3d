// Service accounts and API keys for tests, made through the HTTP routes by a caller that may (the routes under test
// are the same ones; this only saves repeating the two calls). node:assert, not vitest: the benchmarks use them too.
import assert from 'node:assert/strict';
import type { ApiClient } from './client.js';

export interface IssuedKey {
  id: string;
  key: string;
  prefix: string;
}

export interface ServiceAccountWithKey {
  account: { id: string; clientId: string; orgId: string | null; partnerId: string; roleId: string; name: string };
  key: IssuedKey;
  /** A client that sends the key as `Authorization: Bearer`. */
  api: ApiClient;
}

let n = 0;

export async function createServiceAccount(
  api: ApiClient,
  body: { roleId: string; orgId?: string; name?: string; description?: string },
) {
  const res = await api.post('/service-accounts', { name: `Integration ${++n}-${Date.now().toString(36)}`, ...body });
  assert.equal(res.status, 201, res.text);
  return res.body as ServiceAccountWithKey['account'];
}

export async function issueKey(
  api: ApiClient,
  accountId: string,
  body: { name?: string; expiresAt?: string; allowedCidrs?: string[] } = {},
  query?: Record<string, string>,
) {
  const res = await api.post(
    `/service-accounts/${accountId}/keys`,
    { name: `key ${++n}`, ...body },
    query ? { query } : undefined,
  );
  assert.equal(res.status, 201, res.text);
  return res.body as IssuedKey & Record<string, unknown>;
}

/** A service account holding `roleId` (in the organisation `orgId`, or the caller's own scope) with one key. */
export async function serviceAccountWithKey(
  admin: ApiClient,
  body: { roleId: string; orgId?: string; keyOptions?: { expiresAt?: string; allowedCidrs?: string[] } },
): Promise<ServiceAccountWithKey> {
  const account = await createServiceAccount(admin, { roleId: body.roleId, orgId: body.orgId });
  const key = await issueKey(admin, account.id, body.keyOptions);
  return { account, key, api: admin.withToken(key.key) };
}
