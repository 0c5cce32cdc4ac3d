// Explain agrees with enforcement under delegated-access relationships: fast-check draws, for a fresh partner and its
// two customers, the relationships (their roles, reach, and the access groups they are bound to), whether the partner
// requires them, and one member (a role chain, possibly *:*; a standing orgAccess among all, all_except, selected, none
// and eligible; its access groups; a just-in-time grant, whole or one site). Every record of the world is asked
// through GET /access/explain (by the customer's admin) and through the route that enforces it, signed in as the
// member: they must agree, and who-can must list the member exactly where the route lets it through.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { createRoleChain } from '../support/access.js';
import {
  addPartnerMember,
  createDevice,
  createOrg,
  createPartner,
  createSite,
  createUser,
  sessionFor,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';
import type { ApiClient } from '../support/client.js';
import { expectStatus, ORG_ADMIN, PARTNER_ADMIN, PARTNER_TECH, PARTNER_VIEWER } from '../onboarding/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

const PERMS = ['devices:read', 'devices:write', 'sites:read', 'organizations:read'];
const relationship = fc.record({
  org: fc.constantFrom(0, 1),
  roles: fc.subarray([PARTNER_VIEWER, PARTNER_TECH], { minLength: 1 }),
  /** null: the whole organisation; else the organisation's sites by index. */
  sites: fc.option(fc.subarray([0, 1], { minLength: 1 }), { nil: null, freq: 2 }),
  groups: fc.subarray([0, 1]),
});
const scenario = fc.record({
  requireRelationships: fc.constantFrom(true, true, true, true, false),
  relationships: fc.array(relationship, { minLength: 1, maxLength: 3 }),
  chain: fc.array(fc.subarray(PERMS), { minLength: 1, maxLength: 2 }),
  star: fc.constantFrom(false, false, false, true),
  orgAccess: fc.constantFrom(
    'all' as const,
    'all_except' as const,
    'selected' as const,
    'none' as const,
    'eligible' as const,
  ),
  orgs: fc.subarray([0, 1]),
  groups: fc.subarray([0, 1]),
  /** A just-in-time grant asked for (orgAccess eligible with that organisation): null, the whole of it, or one site. */
  grant: fc.option(fc.record({ org: fc.constantFrom(0, 1), site: fc.option(fc.constantFrom(0, 1), { nil: null }) }), {
    nil: null,
  }),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never;

interface Target {
  label: string;
  org: number;
  permission: string;
  resourceType: string;
  resourceId: string;
  call(api: ApiClient): Promise<{ status: number; text: string }>;
}

/** A fresh partner and two customers, each with two sites and a device in each, and the drawn relationships and groups. */
async function world(s: Scenario) {
  const partner = await createPartner(t);
  const orgs = [await createOrg(t, partner.id), await createOrg(t, partner.id)];
  const sites = await Promise.all(orgs.map(async (o) => [await createSite(t, o.id), await createSite(t, o.id)]));
  const devices = await Promise.all(
    orgs.map(async (o, i) => [await createDevice(t, o, sites[i]![0]!.id), await createDevice(t, o, sites[i]![1]!.id)]),
  );
  const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const orgAdmins = await Promise.all(orgs.map((o) => signedInOrgMember(t, o, { roleId: ORG_ADMIN })));
  const groups = [];
  for (const name of ['A', 'B'])
    groups.push(expectStatus(await admin.api.raw.post('/access-groups', { name: `Group ${name}` }), 201).body.id);
  for (const [i, r] of s.relationships.entries()) {
    const d = expectStatus(
      await admin.api.raw.post('/relationships', {
        orgId: orgs[r.org]!.id,
        name: `Rel ${i}`,
        roleIds: r.roles,
        ...(r.sites ? { siteIds: r.sites.map((k) => sites[r.org]![k]!.id) } : {}),
        duration: 'P1Y',
      }),
      201,
    ).body.id;
    expectStatus(await admin.api.post(`/relationships/${d}/request`), 200);
    expectStatus(await orgAdmins[r.org]!.api.post(`/relationships/${d}/approve`), 200);
    for (const g of r.groups)
      expectStatus(await admin.api.raw.post(`/access-groups/${groups[g]}/relationships`, { relationshipId: d }), 201);
  }
  if (s.requireRelationships)
    expectStatus(await admin.api.patch('/orgs/partners/me', { settings: { requireRelationships: true } }), 200);
  const targets: Target[] = orgs.flatMap((o, i): Target[] => [
    {
      label: `organisation ${i}`,
      org: i,
      permission: 'organizations:read',
      resourceType: 'organization',
      resourceId: o.id,
      call: (api) => api.get(`/orgs/organizations/${o.id}`),
    },
    ...sites[i]!.map(
      (site, k): Target => ({
        label: `site ${i}.${k}`,
        org: i,
        permission: 'sites:read',
        resourceType: 'site',
        resourceId: site.id,
        call: (api) => api.get(`/orgs/sites/${site.id}`),
      }),
    ),
    ...devices[i]!.map(
      (d, k): Target => ({
        label: `device ${i}.${k} read`,
        org: i,
        permission: 'devices:read',
        resourceType: 'device',
        resourceId: d.id,
        call: (api) => api.get(`/devices/${d.id}`),
      }),
    ),
    {
      label: `device ${i}.0 write`,
      org: i,
      permission: 'devices:write',
      resourceType: 'device',
      resourceId: devices[i]![0]!.id,
      call: (api) => api.patch(`/devices/${devices[i]![0]!.id}`, { name: `renamed ${i}` }),
    },
  ]);
  return { partner, orgs, sites, admin, orgAdmins, groups, targets };
}

/** The drawn member, signed in; a just-in-time grant asked for through the API when drawn (auto-approved). */
async function member(s: Scenario, w: Awaited<ReturnType<typeof world>>) {
  const links = s.chain.map((permissions, i) => ({ permissions: i === 0 && s.star ? ['*:*'] : permissions }));
  const { leaf } = await createRoleChain(t, { kind: 'partner', partnerId: w.partner.id }, links);
  const user = await createUser(t, { mfaEnabled: true });
  const orgAccess = s.grant && s.orgAccess !== 'eligible' ? 'eligible' : s.orgAccess;
  const orgIds = [...new Set([...s.orgs, ...(s.grant ? [s.grant.org] : [])])].map((i) => w.orgs[i]!.id);
  await addPartnerMember(t, {
    partnerId: w.partner.id,
    userId: user.id,
    roleId: leaf.id,
    orgAccess,
    orgIds: orgAccess === 'all' || orgAccess === 'none' ? [] : orgIds,
  });
  for (const g of s.groups)
    expectStatus(await w.admin.api.raw.post(`/access-groups/${w.groups[g]}/members`, { userId: user.id }), 201);
  const session = await sessionFor(t, user.id, { scope: 'partner', partnerId: w.partner.id, roleId: leaf.id }, true);
  const api = t.client().withToken(session.accessToken);
  if (s.grant) {
    const res = await api.post('/access/requests', {
      orgId: w.orgs[s.grant.org]!.id,
      ...(s.grant.site !== null ? { siteId: w.sites[s.grant.org]![s.grant.site]!.id } : {}),
      durationMinutes: 30,
      reason: 'Drawn grant',
    });
    expect(res.status, res.text).toBe(201);
  }
  return { user, api };
}

describe('explain agrees with enforcement under relationships, access groups, all_except and grants', () => {
  it('for drawn relationships, groups, roles and grants, explain.allowed is exactly "the route answers 2xx", and who-can agrees', async () => {
    const seen = { allowed: 0, refused: 0, viaGroup: 0 };
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const w = await world(s);
        const { user, api } = await member(s, w);
        for (const target of w.targets) {
          const asker = w.orgAdmins[target.org]!.api;
          const query = {
            permission: target.permission,
            resourceType: target.resourceType,
            resourceId: target.resourceId,
          };
          const ex = await asker.get('/access/explain', { query: { ...query, userId: user.id } });
          expect(ex.status, ex.text).toBe(200);
          const actual = await target.call(api);
          expect([200, 403, 404], actual.text).toContain(actual.status);
          const enforced = actual.status === 200;
          if (ex.body.allowed !== enforced)
            throw new Error(
              `${target.label}: explain says ${ex.body.allowed} (${ex.body.deniedBy}), the route answered ${actual.status} ${actual.text}\n${JSON.stringify(s)}\n${JSON.stringify(ex.body.reasons)}`,
            );
          seen[enforced ? 'allowed' : 'refused']++;
          const rel = (ex.body.reasons as { step: string; allowed: boolean; accessGroupIds?: string[] }[]).find(
            (r) => r.step === 'relationship',
          );
          if (enforced && rel?.accessGroupIds?.length) seen.viaGroup++;
          const who = await asker.get('/access/who-can', { query: { ...query, limit: 200 } });
          expect(who.status, who.text).toBe(200);
          const listed = (who.body.data as { id: string }[]).some((r) => r.id === user.id);
          if (listed !== enforced)
            throw new Error(
              `${target.label}: who-can lists the member: ${listed}, the route: ${actual.status}\n${JSON.stringify(s)}`,
            );
        }
      }),
      { numRuns: 15, endOnFailure: true },
    );
    // The draws reached both answers, and access through a relationship used through a group.
    expect(seen.allowed).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
    expect(seen.viaGroup).toBeGreaterThan(0);
  }, 240_000);
});
