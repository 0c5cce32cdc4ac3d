// One rule for a resource addressed by id: the record's tenant decides. Walks every `:id` route the app registers
// (outside /users and /roles, which have their own rule) for four kinds of caller and proves both halves: a record
// inside the caller's scope is reached without ?orgId= (and with the ?orgId= of its organisation), and a record outside
// it, or a ?orgId= that disagrees with the record, is 404 `not_found`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORG_ADMIN_ROLE_ID, PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiResponse } from '../support/client.js';
import {
  createOrg,
  createPartner,
  createSite,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { BY_ID_CASES, NOT_BY_TENANT, type ByIdCase, type Place } from './by-id-routes.js';

let t: TestApp;
let places: { a1: Place; a2: Place; b: Place; foreign: Place };
const callers: Record<string, SignedInMember> = {};

type CallerName =
  | 'partner with orgAccess all'
  | 'partner with orgAccess selected'
  | 'organisation member'
  | 'member restricted to a site';
const CALLERS: CallerName[] = [
  'partner with orgAccess all',
  'partner with orgAccess selected',
  'organisation member',
  'member restricted to a site',
];

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  const partner = await createPartner(t);
  const other = await createPartner(t);
  const [a, b, c] = [await createOrg(t, partner.id), await createOrg(t, partner.id), await createOrg(t, other.id)];
  const place = async (org: { id: string; partnerId: string }) => ({
    partnerId: org.partnerId,
    orgId: org.id,
    siteId: (await createSite(t, org.id)).id,
  });
  places = { a1: await place(a), a2: await place(a), b: await place(b), foreign: await place(c) };
  callers['partner with orgAccess all'] = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN_ROLE_ID });
  callers['partner with orgAccess selected'] = await signedInPartnerMember(t, partner.id, {
    roleId: PARTNER_ADMIN_ROLE_ID,
    orgAccess: 'selected',
    orgIds: [a.id],
  });
  callers['organisation member'] = await signedInOrgMember(t, a, { roleId: ORG_ADMIN_ROLE_ID });
  callers['member restricted to a site'] = await signedInOrgMember(t, a, {
    roleId: ORG_ADMIN_ROLE_ID,
    siteIds: [places.a1.siteId],
  });
}, 60_000);
afterAll(async () => t?.close());

/** The places a caller's scope covers for a route; the rest of `places` lies outside it. */
function inside(caller: CallerName, c: ByIdCase): Place[] {
  switch (caller) {
    case 'partner with orgAccess all':
      return [places.a1, places.a2, places.b];
    case 'partner with orgAccess selected':
    case 'organisation member':
      return [places.a1, places.a2];
    case 'member restricted to a site':
      if (c.freshSite) return [];
      return c.sited ? [places.a1] : [places.a1, places.a2];
  }
}
const outside = (caller: CallerName, c: ByIdCase) =>
  Object.values(places).filter((p) => !inside(caller, c).includes(p));

/**
 * Refusals that come before the record is looked up and do not depend on it (guard order: tenant context, full
 * organisation access, permission): deleting an organisation is for partner users with full access. They are proven
 * identical inside and outside the scope.
 */
function refusedBeforeLookup(caller: CallerName, c: ByIdCase): string | null {
  if (c.method === 'DELETE' && c.url === '/orgs/organizations/:id') {
    if (caller === 'partner with orgAccess selected') return 'full_org_access_required';
    if (caller !== 'partner with orgAccess all') return 'forbidden';
  }
  // Service accounts are administered like users: full organisation access; Organization Admin reads (api_keys:read), does not write.
  if (c.url.startsWith('/service-accounts/')) {
    if (caller === 'partner with orgAccess selected') return 'full_org_access_required';
    if (c.method !== 'GET' && (caller === 'organisation member' || caller === 'member restricted to a site'))
      return 'forbidden';
  }
  // SCIM tokens are administered like users (full organisation access); a site-restricted member makes and revokes none.
  if (c.url.startsWith('/scim-tokens/')) {
    if (caller === 'partner with orgAccess selected') return 'full_org_access_required';
    if (caller === 'member restricted to a site') return 'permission_ceiling';
  }
  // The organisation's record and settings hold every site: a site-restricted member changes none of them.
  if (c.method === 'PATCH' && c.url === '/orgs/organizations/:id' && caller === 'member restricted to a site')
    return 'permission_ceiling';
  // Audit webhooks need audit:manage, which the seeded Organization Admin role does not hold.
  if (c.url.startsWith('/webhooks/') && (caller === 'organisation member' || caller === 'member restricted to a site'))
    return 'forbidden';
  return null;
}

const reached = (res: ApiResponse, label: string) => expect(res.status, `${label}: ${res.text}`).toBeLessThan(300);
const hidden = (res: ApiResponse, label: string) => {
  expect(res.status, `${label}: ${res.text}`).toBe(404);
  expect(res.body.code).toBe('not_found');
};

describe('every :id route is in the walk', () => {
  it('the case table names exactly the registered :id routes outside /users, /roles and /auth', () => {
    const served = t.app.registeredRoutes
      .filter((r) => r.url.startsWith('/api/v1/') && r.url.includes('/:id'))
      .map((r) => `${r.method} ${r.url.slice('/api/v1'.length)}`)
      .filter((r) => !NOT_BY_TENANT(r.split(' ')[1]!));
    expect(new Set(BY_ID_CASES.map((c) => `${c.method} ${c.url}`))).toEqual(new Set(served));
  });

  it('/openapi.json documents ?orgId= on every one of them', async () => {
    const doc = (await (await fetch(`${t.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    for (const c of BY_ID_CASES) {
      const op = doc.paths[`/api/v1${c.url.replace(/:([A-Za-z]+)/g, '{$1}')}`]?.[c.method.toLowerCase()];
      expect(
        op?.parameters?.some((p) => p.in === 'query' && p.name === 'orgId'),
        `${c.method} ${c.url}`,
      ).toBe(true);
    }
  });
});

describe.each(CALLERS)('a %s', (caller) => {
  it.each(BY_ID_CASES.map((c) => [`${c.method} ${c.url}`, c] as const))(
    'reaches %s records of its scope without ?orgId=, and nothing outside it',
    async (label, c) => {
      const api = callers[caller]!.api;
      const refusal = refusedBeforeLookup(caller, c);
      for (const at of inside(caller, c)) {
        const res = await c.call(api, await c.make(t, at), {}, t);
        if (refusal) expect([res.status, res.body.code], `${label} in scope`).toEqual([403, refusal]);
        else reached(res, `${label} in scope, no orgId`);
        if (refusal) continue;
        const again = await c.make(t, at);
        // An organisation's own record is the organisation.
        reached(
          await c.call(api, again, { orgId: c.url.startsWith('/orgs/organizations/') ? again : at.orgId }, t),
          `${label} in scope, agreeing orgId`,
        );
      }
      for (const at of outside(caller, c)) {
        const id = await c.make(t, at);
        const res = await c.call(api, id, {}, t);
        if (refusal) expect([res.status, res.body.code], `${label} outside scope`).toEqual([403, refusal]);
        else hidden(res, `${label} outside scope`);
        if (!refusal) hidden(await c.call(api, id, { orgId: at.orgId }, t), `${label} outside scope, naming its orgId`);
      }
    },
  );

  it.each(BY_ID_CASES.map((c) => [`${c.method} ${c.url}`, c] as const))(
    'gets 404 on %s when ?orgId= disagrees with the record',
    async (label, c) => {
      if (refusedBeforeLookup(caller, c)) return;
      const api = callers[caller]!.api;
      const at = inside(caller, c)[0];
      if (!at) return; // nothing of this kind is inside the caller's scope (a fresh site for a site-restricted member)
      // Another organisation the caller may name (B for a full partner caller), or one it may not.
      for (const orgId of [places.b.orgId, places.foreign.orgId].filter((o) => o !== at.orgId))
        hidden(await c.call(api, await c.make(t, at), { orgId }, t), `${label} with orgId ${orgId}`);
    },
  );
});
