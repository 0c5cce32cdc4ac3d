// The world the authorization API tests ask about: two partners (each with two organisations and the onboarding
// members), sites, device groups and devices in the first, and a service account of each partner holding
// authz:evaluate (made through the API by the partner's admin, its key issued there). Calls go to the standard's
// paths (outside /api/v1) with the account's key as a bearer credential.
import { createRole } from '../support/access.js';
import type { TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import {
  createDevice,
  createDeviceGroup,
  createSite,
  onboardingTenant,
  type OnboardingTenant,
} from '../support/fixtures.js';
import { serviceAccountWithKey, type ServiceAccountWithKey } from '../support/service-accounts.js';

export const PATHS = {
  evaluation: '/access/v1/evaluation',
  evaluations: '/access/v1/evaluations',
  subject: '/access/v1/search/subject',
  resource: '/access/v1/search/resource',
  action: '/access/v1/search/action',
  metadata: '/.well-known/authzen-configuration',
} as const;

export interface Pdp {
  call(path: keyof typeof PATHS, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
}

/** A caller of the authorization API with `api`'s credentials. */
export const pdpOf = (t: TestApp, api: ApiClient): Pdp => ({
  call: (path, body, headers) =>
    path === 'metadata'
      ? api.raw.get(`${t.baseUrl}${PATHS[path]}`, { headers })
      : api.raw.post(`${t.baseUrl}${PATHS[path]}`, body, { headers }),
});

export interface World {
  a: OnboardingTenant;
  b: OnboardingTenant;
  /** Sites and groups of a's first organisation: s1 (g1 in it), s2; g2 without a site. */
  sites: { id: string }[];
  groups: { id: string }[];
  /** Devices of a's first organisation: d[0] in s1/g1, d[1] in s2/g2, d[2] in s1 (no group); d[3] in a's second organisation. */
  devices: { id: string }[];
  /** A device of partner b. */
  foreignDevice: { id: string };
  callerA: ServiceAccountWithKey;
  callerB: ServiceAccountWithKey;
  pdpA: Pdp;
  pdpB: Pdp;
}

/** A service account of the tenant holding authz:evaluate only. */
export async function evaluatorOf(t: TestApp, w: OnboardingTenant, extra: string[] = []) {
  const role = await createRole(t, {
    owner: { kind: 'partner', partnerId: w.partner.id },
    permissions: ['authz:evaluate', ...extra],
  });
  return serviceAccountWithKey(w.admin.api, { roleId: role.id });
}

export async function buildWorld(t: TestApp): Promise<World> {
  const a = await onboardingTenant(t);
  const b = await onboardingTenant(t);
  const [o1, o2] = a.orgs;
  const s1 = await createSite(t, o1.id);
  const s2 = await createSite(t, o1.id);
  const s3 = await createSite(t, o2.id);
  const g1 = await createDeviceGroup(t, o1.id, { siteId: s1.id });
  const g2 = await createDeviceGroup(t, o1.id);
  const devices = [
    await createDevice(t, o1, s1.id, { groupIds: [g1.id] }),
    await createDevice(t, o1, s2.id, { groupIds: [g2.id] }),
    await createDevice(t, o1, s1.id),
    await createDevice(t, o2, s3.id),
  ];
  const bSite = await createSite(t, b.orgs[0].id);
  const foreignDevice = await createDevice(t, b.orgs[0], bSite.id);
  const callerA = await evaluatorOf(t, a);
  const callerB = await evaluatorOf(t, b);
  return {
    a,
    b,
    sites: [s1, s2, s3],
    groups: [g1, g2],
    devices,
    foreignDevice,
    callerA,
    callerB,
    pdpA: pdpOf(t, callerA.api),
    pdpB: pdpOf(t, callerB.api),
  };
}

export const user = (id: string, properties?: Record<string, unknown>) => ({
  type: 'user',
  id,
  ...(properties ? { properties } : {}),
});
export const device = (id: string) => ({ type: 'device', id });
