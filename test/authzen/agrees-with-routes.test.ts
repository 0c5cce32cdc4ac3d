// An evaluation answers exactly as the API route does: fast-check draws members (the explain property test's drawn
// role chains, memberships, restrictions and accounts) and, for some, a service account holding the same role; the
// routes are the by-id GET operations of /openapi.json over devices, sites, device groups, organisations and scripts,
// each with the permission its description names. For each drawn subject, every (route, record) pair is asked once
// through one batch of evaluations and once through the route itself, with the subject's own credential.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { materialise, memberArbitrary } from '../support/drawn-members.js';
import {
  createDevice,
  createDeviceGroup,
  createSite,
  onboardingTenant,
  type OnboardingTenant,
} from '../support/fixtures.js';
import { serviceAccountWithKey } from '../support/service-accounts.js';
import { evaluatorOf, pdpOf, type Pdp } from './world.js';

let t: TestApp;
let w: OnboardingTenant;
let pdp: Pdp;
let siteIds: string[] = [];
let groupIds: string[] = [];

interface Case {
  label: string;
  path: string;
  permission: string;
  resource: { type: string; id: string };
}
const cases: Case[] = [];

/** The resource families of the authorization API and their by-id paths. */
const FAMILIES: [prefix: string, type: string][] = [
  ['/api/v1/devices/{id}', 'device'],
  ['/api/v1/orgs/sites/{id}', 'site'],
  ['/api/v1/device-groups/{id}', 'device_group'],
  ['/api/v1/orgs/organizations/{id}', 'organization'],
  ['/api/v1/scripts/{id}', 'script'],
];

interface Operation {
  description?: string;
  parameters?: { in: string; required?: boolean }[];
}

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
    await createDevice(t, o2, s3.id, { groupIds: [g3.id] }),
  ];
  const script = async (body: Record<string, unknown>) => {
    const res = await w.admin.api.raw.post('/scripts', {
      name: `Script ${Math.random().toString(36).slice(2)}`,
      language: 'powershell',
      content: 'Get-Date',
      ...body,
    });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string };
  };
  const scripts = [
    await script({ availability: 'organization', orgId: o1.id }),
    await script({ availability: 'partner' }),
  ];
  const records: Record<string, { id: string }[]> = {
    device: devices,
    site: [s1, s2, s3],
    device_group: [g1, g2, g3],
    organization: [o1, o2],
    script: scripts,
  };
  const doc = (await (await fetch(`${t.baseUrl}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, Operation>>;
  };
  for (const [path, ops] of Object.entries(doc.paths)) {
    const family = FAMILIES.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`));
    const get = ops.get;
    if (!family || !get || path.split('{').length !== 2) continue;
    if ((get.parameters ?? []).some((p) => p.in === 'query' && p.required)) continue;
    const perms = [...(get.description ?? '').matchAll(/Needs permission `([a-z_]+:[a-z_]+)`/g)].map((m) => m[1]!);
    if (perms.length !== 1) continue;
    for (const [i, r] of records[family[1]]!.entries())
      cases.push({
        label: `GET ${path} #${i + 1}`,
        path: path.replace('{id}', r.id),
        permission: perms[0]!,
        resource: { type: family[1], id: r.id },
      });
  }
  pdp = pdpOf(t, (await evaluatorOf(t, w)).api);
});
afterAll(async () => t?.close());

const PERMS = ['devices:read', 'devices:write', 'sites:read', 'organizations:read', 'scripts:read'];
const drawn = fc.record({ member: memberArbitrary(PERMS), asAccount: fc.constantFrom(false, false, true) });

async function agree(subject: { type: string; id: string }, api: ApiClient, what: string) {
  const res = await pdp.call('evaluations', {
    subject,
    evaluations: cases.map((c) => ({ resource: c.resource, action: { name: c.permission } })),
  });
  expect(res.status, res.text).toBe(200);
  for (const [i, c] of cases.entries()) {
    const route = await api.raw.get(c.path);
    expect([200, 401, 403, 404, 428], route.text).toContain(route.status);
    const answer = res.body.evaluations[i];
    if (answer.decision !== (route.status === 200))
      throw new Error(
        `${what}, ${c.label} (${c.permission}): the evaluation says ${answer.decision} (${answer.context.denied_by}), the route answered ${route.status} ${route.text}\n${JSON.stringify(answer.context.reasons)}`,
      );
  }
}

describe('an evaluation agrees with the route', () => {
  it('samples routes from /openapi.json', () => {
    expect(new Set(cases.map((c) => c.resource.type))).toEqual(new Set(FAMILIES.map(([, type]) => type)));
    expect(cases.length).toBeGreaterThanOrEqual(13);
  });

  it('for drawn people and service accounts, decision is exactly "the route answers 200"', async () => {
    await fc.assert(
      fc.asyncProperty(drawn, async ({ member, asAccount }) => {
        const m = await materialise(t, w, siteIds, groupIds, member);
        await agree({ type: 'user', id: m.user.id }, m.api, `user ${JSON.stringify(member)}`);
        // A service account never holds a role with *:* (its creation refuses it).
        if (asAccount && !(member.star && member.kind === 'partner')) {
          const sa = await serviceAccountWithKey(w.admin.api, {
            roleId: m.roleId,
            ...(member.kind === 'organization' ? { orgId: w.orgs[member.org]!.id } : {}),
          });
          await agree(
            { type: 'service_account', id: sa.account.id },
            sa.api,
            `service account ${JSON.stringify(member)}`,
          );
        }
      }),
      { numRuns: 12, endOnFailure: true },
    );
  }, 300_000);
});
