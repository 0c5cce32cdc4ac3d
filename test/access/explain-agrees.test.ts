// Explain agrees with enforcement: fast-check draws role chains (custom roles under custom
// or system parents, Force MFA anywhere), memberships (partner: orgAccess all / selected / none; organisation: site and
// device-group restrictions), accounts with and without a factor, disabled accounts; for each drawn member, every
// record of a fixed world is asked through GET /access/explain and through the route that enforces it, signed in as
// the member. They must agree; who-can must list exactly the members the routes let through.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import {
  createDevice,
  createDeviceGroup,
  createSite,
  onboardingTenant,
  type OnboardingTenant,
} from '../support/fixtures.js';
import { materialise as materialiseMember, memberArbitrary, type DrawnMember } from '../support/drawn-members.js';
import type { ApiClient } from '../support/client.js';

let t: TestApp;
let w: OnboardingTenant;

interface Target {
  label: string;
  permission: string;
  resourceType: string;
  resourceId: string;
  call(api: ApiClient): Promise<{ status: number; text: string }>;
}
let targets: Target[] = [];
let siteIds: string[] = [];
let groupIds: string[] = [];
/** Per target, the drawn members the route let through (for the who-can check). */
const allowedBy = new Map<string, Set<string>>();
const drawn = new Set<string>();

beforeAll(async () => {
  t = await startApp();
  w = await onboardingTenant(t);
  const [o1, o2] = w.orgs;
  const s1 = await createSite(t, o1.id);
  const s2 = await createSite(t, o1.id);
  const s3 = await createSite(t, o2.id);
  const g1 = await createDeviceGroup(t, o1.id, { siteId: s1.id });
  const g2 = await createDeviceGroup(t, o1.id);
  const g3 = await createDeviceGroup(t, o2.id);
  siteIds = [s1.id, s2.id, s3.id];
  groupIds = [g1.id, g2.id, g3.id];
  const devices = [
    await createDevice(t, o1, s1.id, { groupIds: [g1.id] }),
    await createDevice(t, o1, s2.id, { groupIds: [g2.id] }),
    await createDevice(t, o1, s1.id),
    await createDevice(t, o2, s3.id, { groupIds: [g3.id] }),
    await createDevice(t, o1, s2.id, { groupIds: [g1.id, g2.id] }),
  ];
  targets = [
    ...devices.flatMap((d, i): Target[] => [
      {
        label: `device ${i + 1} read`,
        permission: 'devices:read',
        resourceType: 'device',
        resourceId: d.id,
        call: (api) => api.get(`/devices/${d.id}`),
      },
      {
        label: `device ${i + 1} write`,
        permission: 'devices:write',
        resourceType: 'device',
        resourceId: d.id,
        call: (api) => api.patch(`/devices/${d.id}`, { name: `renamed ${i}` }),
      },
    ]),
    ...[s1, s2, s3].map(
      (s, i): Target => ({
        label: `site ${i + 1}`,
        permission: 'sites:read',
        resourceType: 'site',
        resourceId: s.id,
        call: (api) => api.get(`/orgs/sites/${s.id}`),
      }),
    ),
    ...[g1, g2, g3].map(
      (g, i): Target => ({
        label: `group ${i + 1}`,
        permission: 'sites:read',
        resourceType: 'device_group',
        resourceId: g.id,
        call: (api) => api.get(`/device-groups/${g.id}`),
      }),
    ),
    ...[o1, o2].map(
      (o, i): Target => ({
        label: `organisation ${i + 1}`,
        permission: 'organizations:read',
        resourceType: 'organization',
        resourceId: o.id,
        call: (api) => api.get(`/orgs/organizations/${o.id}`),
      }),
    ),
  ];
  for (const target of targets) allowedBy.set(target.label, new Set());
});
afterAll(async () => t?.close());

const PERMS = ['devices:read', 'devices:write', 'sites:read', 'organizations:read'];
const member = memberArbitrary(PERMS);
type Member = DrawnMember;
const materialise = (m: Member) => materialiseMember(t, w, siteIds, groupIds, m);

describe('explain agrees with enforcement', () => {
  it('for drawn role chains, memberships, restrictions and accounts, explain.allowed is exactly "the route answers 2xx"', async () => {
    await fc.assert(
      fc.asyncProperty(member, async (m) => {
        const { user, api } = await materialise(m);
        drawn.add(user.id);
        for (const target of targets) {
          const ex = await w.admin.api.get('/access/explain', {
            query: {
              userId: user.id,
              permission: target.permission,
              resourceType: target.resourceType,
              resourceId: target.resourceId,
            },
          });
          // A member of the other organisation only has no membership bearing on the record: still an answer (denied).
          expect(ex.status, ex.text).toBe(200);
          const actual = await target.call(api);
          expect([200, 401, 403, 404, 428], actual.text).toContain(actual.status);
          const enforced = actual.status === 200;
          if (ex.body.allowed !== enforced) {
            throw new Error(
              `${target.label}: explain says ${ex.body.allowed} (${ex.body.deniedBy}), the route answered ${actual.status} ${actual.text}\n${JSON.stringify(m)}\n${JSON.stringify(ex.body.reasons)}`,
            );
          }
          if (enforced) allowedBy.get(target.label)!.add(user.id);
        }
      }),
      { numRuns: 30, endOnFailure: true },
    );
  }, 300_000);

  it('who-can lists exactly the drawn members the routes let through', async () => {
    expect(drawn.size).toBeGreaterThan(0);
    for (const target of targets) {
      const listed = new Set<string>();
      let cursor: string | undefined;
      do {
        const res = await w.admin.api.get('/access/who-can', {
          query: {
            permission: target.permission,
            resourceType: target.resourceType,
            resourceId: target.resourceId,
            limit: 200,
            cursor,
          },
        });
        expect(res.status, res.text).toBe(200);
        for (const row of res.body.data as { id: string }[]) if (drawn.has(row.id)) listed.add(row.id);
        cursor = res.body.nextCursor ?? undefined;
      } while (cursor);
      expect([...listed].sort(), target.label).toEqual([...allowedBy.get(target.label)!].sort());
    }
  }, 120_000);
});
