// Shared by the onboarding tests: the error envelope check, roles by name, and enrolment through the public agent API.
import { expect } from 'vitest';
import { ERROR_CATALOG } from '../../src/http/errors.js';
import { totpFor } from '../../src/modules/mfa/codes.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import type { TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';

export const [PARTNER_ADMIN, PARTNER_TECH, PARTNER_VIEWER, ORG_ADMIN, ORG_TECH, ORG_VIEWER] = SYSTEM_ROLES.map(
  (r) => r.id as string,
) as [string, string, string, string, string, string];

/** A non-2xx answer in the API's error envelope, with the status the catalogue gives its code. */
export function expectError(res: ApiResponse, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }, res.text).toEqual({ status, code });
  expect(res.body).toMatchObject({ error: expect.any(String), message: expect.any(String), code });
  const entry = (ERROR_CATALOG as Record<string, { status: number }>)[code];
  expect(entry, `code ${code} is not in the catalogue`).toBeDefined();
  expect(entry!.status).toBe(status);
}

/** A 2xx (or the given) status, with the body in the failure message. */
export function expectStatus<T extends ApiResponse>(res: T, status: number): T {
  expect(res.status, `${res.status} ${res.text}`).toBe(status);
  return res;
}

/** Ids of a list answer's rows. */
export const idsOf = (res: ApiResponse) =>
  (expectStatus(res, 200).body.data as { id: string }[]).map((r) => r.id).sort();

/** A key through POST /enrollment-keys (201 expected). */
export async function createKey(
  api: ApiClient,
  body: {
    orgId: string;
    siteId?: string | null;
    deviceGroupId?: string | null;
    name?: string;
    maxUsage?: number;
    expiresAt?: string;
  },
) {
  const res = await api.post('/enrollment-keys', { name: 'wave', ...body });
  expectStatus(res, 201);
  return res.body as {
    id: string;
    orgId: string;
    siteId: string | null;
    deviceGroupId: string | null;
    name: string;
    maxUsage: number;
    usageCount: number;
    expiresAt: string;
    createdAt: string;
    key: string;
  };
}

/** POST /agents/enroll as an agent (no bearer token). */
export function enroll(
  t: TestApp,
  body: {
    enrollmentKey: string;
    hostname?: string;
    osType?: string;
    siteId?: string;
    osVersion?: string;
    agentVersion?: string;
  },
) {
  const given = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
  return t.client().raw.post('/agents/enroll', {
    hostname: `pc-${Math.random().toString(36).slice(2, 8)}`,
    osType: 'windows',
    ...given,
  });
}

/** A device enrolled through the agent API with a fresh single-use key pinned to the site. */
export async function enrolledDevice(t: TestApp, api: ApiClient, orgId: string, siteId: string, hostname?: string) {
  const key = await createKey(api, { orgId, siteId });
  const res = await enroll(t, { enrollmentKey: key.key, hostname });
  expectStatus(res, 201);
  return res.body as { deviceId: string; agentToken: string; orgId: string; siteId: string };
}

/** Setup + enable TOTP through HTTP; the client then carries the replacement tokens. */
export async function enrolTotp(t: TestApp, api: ApiClient) {
  const setup = await api.post('/auth/mfa/setup');
  expectStatus(setup, 200);
  const enable = await api.post('/auth/mfa/enable', {
    code: totpFor(setup.body.secret).generate({ timestamp: t.clock.now().getTime() }),
  });
  expectStatus(enable, 200);
  api.token = enable.body.accessToken;
  return setup.body.secret as string;
}
