// Partner-wide configuration: policies, alert templates, patch policies and maintenance
// windows, owned by the partner (in force in every organisation) or by one organisation. automations:read|write|delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import type { RequestBody } from '../support/api-types.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import { auditRecords, onboardingTenant, type OnboardingTenant } from '../support/fixtures.js';

let t: TestApp;
let a: OnboardingTenant;
let b: OnboardingTenant;
beforeAll(async () => {
  t = await startApp();
  a = await onboardingTenant(t);
  b = await onboardingTenant(t);
});
afterAll(async () => t?.close());

const refused = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ code, error: expect.any(String), message: expect.any(String) });
};

const BODIES = {
  policy: { settings: { antivirus: { enabled: true }, screenLockMinutes: 10 } },
  alert_template: { condition: 'disk.free_percent < 10', severity: 'warning', notify: ['noc@example.test', '#alerts'] },
  patch_policy: { autoApprove: ['critical', 'important'], rebootBehavior: 'if_required', deferDays: 7 },
  maintenance_window: { timezone: 'Europe/London', start: '22:30', durationMinutes: 120, daysOfWeek: [0, 6] },
} as const;
type Kind = keyof typeof BODIES;
/** One kind's body at a time: the union of kinds is not the union of (kind, body) pairs the route takes. */
type ItemInput = RequestBody<'post', '/config-items'>;

let n = 0;
async function create(api: ApiClient, kind: Kind, extra: Record<string, unknown> = {}) {
  const res = await api.post('/config-items', {
    kind,
    name: `${kind} ${++n}`,
    body: BODIES[kind],
    ...extra,
  } as ItemInput);
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; orgId: string | null; name: string; source: string };
}
const ids = (res: ApiResponse) => (res.body.data as { id: string }[]).map((r) => r.id);

describe('each kind is created with a body validated for that kind', () => {
  it('answers 201 with the item, partner-owned without orgId', async () => {
    for (const kind of Object.keys(BODIES) as Kind[]) {
      const res = await a.admin.api.post('/config-items', {
        kind,
        name: `Default ${kind}`,
        description: 'from the old tool',
        body: BODIES[kind],
      } as ItemInput);
      expect(res.status, res.text).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        partnerId: a.partner.id,
        orgId: null,
        kind,
        name: `Default ${kind}`,
        description: 'from the old tool',
        body: BODIES[kind],
        source: 'partner',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const got = await a.admin.api.get(`/config-items/${res.body.id}`);
      expect(got.body).toEqual(res.body);
    }
  });

  const cases: [string, Kind, Record<string, unknown>, string][] = [
    [
      'an unknown time zone',
      'maintenance_window',
      { ...BODIES.maintenance_window, timezone: 'Mars/Olympus_Mons' },
      'body.timezone',
    ],
    ['a start of 24:00', 'maintenance_window', { ...BODIES.maintenance_window, start: '24:00' }, 'body.start'],
    ['a start without minutes', 'maintenance_window', { ...BODIES.maintenance_window, start: '9' }, 'body.start'],
    [
      'a zero duration',
      'maintenance_window',
      { ...BODIES.maintenance_window, durationMinutes: 0 },
      'body.durationMinutes',
    ],
    [
      'a duration over a day',
      'maintenance_window',
      { ...BODIES.maintenance_window, durationMinutes: 1441 },
      'body.durationMinutes',
    ],
    ['day 7', 'maintenance_window', { ...BODIES.maintenance_window, daysOfWeek: [7] }, 'body.daysOfWeek.0'],
    ['a repeated day', 'maintenance_window', { ...BODIES.maintenance_window, daysOfWeek: [1, 1] }, 'body.daysOfWeek'],
    ['no day', 'maintenance_window', { ...BODIES.maintenance_window, daysOfWeek: [] }, 'body.daysOfWeek'],
    [
      'an unknown classification',
      'patch_policy',
      { ...BODIES.patch_policy, autoApprove: ['urgent'] },
      'body.autoApprove.0',
    ],
    [
      'an unknown reboot behaviour',
      'patch_policy',
      { ...BODIES.patch_policy, rebootBehavior: 'sometimes' },
      'body.rebootBehavior',
    ],
    ['366 deferral days', 'patch_policy', { ...BODIES.patch_policy, deferDays: 366 }, 'body.deferDays'],
    ['fractional deferral days', 'patch_policy', { ...BODIES.patch_policy, deferDays: 1.5 }, 'body.deferDays'],
    ['an unknown severity', 'alert_template', { ...BODIES.alert_template, severity: 'fatal' }, 'body.severity'],
    ['an empty condition', 'alert_template', { ...BODIES.alert_template, condition: ' ' }, 'body.condition'],
    [
      'recipients that are not a list',
      'alert_template',
      { ...BODIES.alert_template, notify: 'noc@example.test' },
      'body.notify',
    ],
    ['policy settings missing', 'policy', {}, 'body.settings'],
    ['a NUL in a policy setting', 'policy', { settings: { banner: 'a\u0000b' } }, 'body.settings'],
    ["another kind's body", 'patch_policy', BODIES.maintenance_window, 'body'],
    ['an unknown body field', 'patch_policy', { ...BODIES.patch_policy, extra: 1 }, 'body.extra'],
  ];
  it.each(cases)('refuses %s (400 validation_failed naming the field)', async (_label, kind, body, field) => {
    const res = await a.admin.api.raw.post('/config-items', { kind, name: 'Bad', body });
    refused(res, 400, 'validation_failed');
    expect(
      Object.keys(res.body.details.fieldErrors).some((k) => k === field || k.startsWith(`${field}.`)),
      JSON.stringify(res.body.details),
    ).toBe(true);
  });

  it('refuses an unknown kind, a missing name, a NUL in the name and unknown top-level fields', async () => {
    refused(
      await a.admin.api.raw.post('/config-items', { kind: 'backup_plan', name: 'x', body: {} }),
      400,
      'validation_failed',
    );
    refused(
      await a.admin.api.raw.post('/config-items', { kind: 'policy', body: BODIES.policy }),
      400,
      'validation_failed',
    );
    refused(
      await a.admin.api.post('/config-items', { kind: 'policy', name: 'a\u0000b', body: BODIES.policy }),
      400,
      'validation_failed',
    );
    refused(
      await a.admin.api.raw.post('/config-items', {
        kind: 'policy',
        name: 'x',
        body: BODIES.policy,
        partnerId: b.partner.id,
      }),
      400,
      'validation_failed',
    );
    refused(
      await a.admin.api.request('POST', '/config-items', { rawBody: '{"kind":', contentType: 'application/json' }),
      400,
      'validation_failed',
    );
    refused(await a.admin.api.get('/config-items/not-a-uuid'), 400, 'validation_failed');
    refused(await a.admin.api.get('/config-items', { query: { kind: 'nope' } }), 400, 'validation_failed');
    refused(await a.admin.api.get('/config-items', { query: { cursor: 'garbage' } }), 400, 'validation_failed');
    refused(await a.admin.api.get('/config-items', { query: { search: 'a\u0000' } }), 400, 'validation_failed');
  });

  it('a PATCH body must fit the kind of the item it changes', async () => {
    const item = await create(a.admin.api, 'patch_policy');
    refused(
      await a.admin.api.patch(`/config-items/${item.id}`, { body: BODIES.maintenance_window }),
      400,
      'validation_failed',
    );
    refused(
      await a.admin.api.patch(`/config-items/${item.id}`, { body: { ...BODIES.patch_policy, deferDays: 400 } }),
      400,
      'validation_failed',
    );
    refused(await a.admin.api.patch(`/config-items/${item.id}`, {}), 400, 'validation_failed');
    refused(await a.admin.api.raw.patch(`/config-items/${item.id}`, { kind: 'policy' }), 400, 'validation_failed');
    const ok = await a.admin.api.patch(`/config-items/${item.id}`, {
      name: 'Renamed',
      body: { ...BODIES.patch_policy, deferDays: 14 },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({
      name: 'Renamed',
      kind: 'patch_policy',
      body: { deferDays: 14, rebootBehavior: 'if_required' },
    });
    expect((await a.admin.api.get(`/config-items/${item.id}`)).body.body.deferDays).toBe(14);
  });
});

describe('partner-owned items are in force in every organisation of the partner', () => {
  it("each organisation lists the partner-owned items beside its own, each with its source; never a sibling's", async () => {
    const shared = await create(a.admin.api, 'maintenance_window');
    const own1 = await create(a.orgAdmins[0].api, 'maintenance_window');
    const own2 = await create(a.admin.api, 'maintenance_window', { orgId: a.orgs[1].id });
    expect(own1).toMatchObject({ orgId: a.orgs[0].id, source: 'organization' });

    const list1 = await a.orgAdmins[0].api.get('/config-items', { query: { kind: 'maintenance_window', limit: 200 } });
    expect(list1.status, list1.text).toBe(200);
    expect(ids(list1)).toEqual(expect.arrayContaining([shared.id, own1.id]));
    expect(ids(list1)).not.toContain(own2.id);
    expect(list1.body.data.find((r: { id: string }) => r.id === shared.id)!.source).toBe('partner');
    expect(list1.body.data.find((r: { id: string }) => r.id === own1.id)!.source).toBe('organization');

    const list2 = await a.orgAdmins[1].api.get('/config-items', { query: { limit: 200 } });
    expect(ids(list2)).toEqual(expect.arrayContaining([shared.id, own2.id]));
    expect(ids(list2)).not.toContain(own1.id);

    const viaPartner = await a.admin.api.get('/config-items', { query: { orgId: a.orgs[0].id, limit: 200 } });
    expect(ids(viaPartner)).toEqual(expect.arrayContaining([shared.id, own1.id]));
    expect(ids(viaPartner)).not.toContain(own2.id);
    const partnerLevel = await a.admin.api.get('/config-items', { query: { limit: 200 } });
    expect(ids(partnerLevel)).toContain(shared.id);
    expect(partnerLevel.body.data.every((r: { source: string }) => r.source === 'partner')).toBe(true);

    for (const member of [a.orgAdmins[0], a.orgAdmins[1], a.selected, a.tech]) {
      const got = await member.api.get(`/config-items/${shared.id}`);
      expect(got.status, got.text).toBe(200);
    }
  });

  it('the kind filter and keyset pages hold (no row twice, none lost)', async () => {
    for (let i = 0; i < 3; i++) await create(a.orgAdmins[1].api, 'alert_template');
    const all = await a.orgAdmins[1].api.get('/config-items', { query: { kind: 'alert_template', limit: 200 } });
    expect(all.body.data.every((r: { kind: string }) => r.kind === 'alert_template')).toBe(true);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await a.orgAdmins[1].api.get('/config-items', {
        query: { kind: 'alert_template', limit: 2, cursor },
      });
      expect(page.status, page.text).toBe(200);
      seen.push(...ids(page));
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(ids(all));
    expect(new Set(seen).size).toBe(seen.length);
  });
});

describe('partner-owned items are changed only by partner users with orgAccess all', () => {
  it('a partner user with selected organisations cannot create, change or delete one (403 full_org_access_required)', async () => {
    const shared = await create(a.admin.api, 'policy');
    refused(
      await a.selected.api.post('/config-items', { kind: 'policy', name: 'x', body: BODIES.policy }),
      403,
      'full_org_access_required',
    );
    refused(
      await a.selected.api.patch(`/config-items/${shared.id}`, { name: 'hijacked' }),
      403,
      'full_org_access_required',
    );
    refused(await a.selected.api.delete(`/config-items/${shared.id}`), 403, 'full_org_access_required');
    // ...but manages the items of its organisation.
    const own = await create(a.selected.api, 'policy', { orgId: a.orgs[0].id });
    expect((await a.selected.api.patch(`/config-items/${own.id}`, { name: 'mine' })).status).toBe(200);
    expect((await a.admin.api.get(`/config-items/${shared.id}`)).body.name).toBe(shared.name);
  });

  it('an organisation admin sees it but cannot change or delete it (403 full_org_access_required)', async () => {
    const shared = await create(a.admin.api, 'patch_policy');
    refused(
      await a.orgAdmins[0].api.patch(`/config-items/${shared.id}`, { name: 'hijacked' }),
      403,
      'full_org_access_required',
    );
    refused(await a.orgAdmins[0].api.delete(`/config-items/${shared.id}`), 403, 'full_org_access_required');
    expect((await a.orgAdmins[0].api.get(`/config-items/${shared.id}`)).body.name).toBe(shared.name);
    // An organisation caller's item without orgId belongs to its organisation, never to the partner.
    expect(await create(a.orgAdmins[0].api, 'policy')).toMatchObject({ orgId: a.orgs[0].id, source: 'organization' });
  });

  it('a partner admin with orgAccess all changes and deletes it, and each change is audited in its transaction', async () => {
    const shared = await create(a.admin.api, 'policy');
    expect((await a.admin.api.patch(`/config-items/${shared.id}`, { description: 'v2' })).status).toBe(200);
    const del = await a.admin.api.delete(`/config-items/${shared.id}`);
    expect(del.status, del.text).toBe(200);
    expect(del.body).toEqual({ success: true });
    refused(await a.admin.api.get(`/config-items/${shared.id}`), 404, 'not_found');
    for (const action of ['config_item.create', 'config_item.update', 'config_item.delete']) {
      const [rec] = await auditRecords(t, action, shared.id);
      expect(rec, action).toMatchObject({
        partnerId: a.partner.id,
        orgId: null,
        actorUserId: a.admin.user.id,
        resourceType: 'config_item',
      });
    }
    const own = await create(a.orgAdmins[0].api, 'policy');
    const [rec] = await auditRecords(t, 'config_item.create', own.id);
    expect(rec).toMatchObject({ orgId: a.orgs[0].id, partnerId: a.partner.id });
  });
});

describe('tenant isolation', () => {
  it("another partner's items are 404 on every route and absent from every list", async () => {
    const shared = await create(a.admin.api, 'policy');
    const own = await create(a.orgAdmins[0].api, 'policy');
    for (const id of [shared.id, own.id]) {
      refused(await b.admin.api.get(`/config-items/${id}`), 404, 'not_found');
      refused(await b.admin.api.patch(`/config-items/${id}`, { name: 'x' }), 404, 'not_found');
      refused(await b.admin.api.delete(`/config-items/${id}`), 404, 'not_found');
      refused(await b.orgAdmins[0].api.get(`/config-items/${id}`), 404, 'not_found');
    }
    refused(await b.admin.api.get('/config-items', { query: { orgId: a.orgs[0].id } }), 404, 'not_found');
    refused(
      await b.admin.api.post('/config-items', { kind: 'policy', name: 'x', body: BODIES.policy, orgId: a.orgs[0].id }),
      404,
      'not_found',
    );
    for (const api of [b.admin.api, b.orgAdmins[0].api]) {
      const list = await api.get('/config-items', { query: { limit: 200 } });
      expect(list.status).toBe(200);
      expect(list.body.data.every((r: { partnerId: string }) => r.partnerId === b.partner.id)).toBe(true);
    }
    expect((await a.admin.api.get(`/config-items/${own.id}`)).body.name).toBe(own.name);
  });

  it("a sibling organisation's items are 404 to an organisation user and to a partner user without access to it", async () => {
    const other = await create(a.admin.api, 'alert_template', { orgId: a.orgs[1].id });
    refused(await a.orgAdmins[0].api.get(`/config-items/${other.id}`), 404, 'not_found');
    refused(await a.orgAdmins[0].api.patch(`/config-items/${other.id}`, { name: 'x' }), 404, 'not_found');
    refused(await a.orgAdmins[0].api.delete(`/config-items/${other.id}`), 404, 'not_found');
    refused(await a.orgAdmins[0].api.get('/config-items', { query: { orgId: a.orgs[1].id } }), 404, 'not_found');
    refused(
      await a.orgAdmins[0].api.post('/config-items', {
        kind: 'policy',
        name: 'x',
        body: BODIES.policy,
        orgId: a.orgs[1].id,
      }),
      404,
      'not_found',
    );
    refused(await a.selected.api.get(`/config-items/${other.id}`), 404, 'not_found');
    refused(await a.selected.api.patch(`/config-items/${other.id}`, { name: 'x' }), 404, 'not_found');
    refused(await a.selected.api.get('/config-items', { query: { orgId: a.orgs[1].id } }), 404, 'not_found');
    refused(
      await a.selected.api.post('/config-items', {
        kind: 'policy',
        name: 'x',
        body: BODIES.policy,
        orgId: a.orgs[1].id,
      }),
      404,
      'not_found',
    );
    const list = await a.selected.api.get('/config-items', { query: { orgId: a.orgs[0].id, limit: 200 } });
    expect(ids(list)).not.toContain(other.id);
  });
});

describe('permissions: automations:read | write | delete', () => {
  it('reading needs automations:read, creating and changing automations:write, deleting automations:delete', async () => {
    const item = await create(a.admin.api, 'policy', { orgId: a.orgs[0].id });
    refused(await a.viewer.api.get('/config-items'), 403, 'forbidden');
    refused(await a.viewer.api.get(`/config-items/${item.id}`), 403, 'forbidden');
    refused(await a.orgViewer.api.get('/config-items'), 403, 'forbidden');
    expect((await a.tech.api.get(`/config-items/${item.id}`)).status).toBe(200);
    refused(
      await a.tech.api.post('/config-items', { kind: 'policy', name: 'x', body: BODIES.policy, orgId: a.orgs[0].id }),
      403,
      'forbidden',
    );
    refused(await a.tech.api.patch(`/config-items/${item.id}`, { name: 'x' }), 403, 'forbidden');
    refused(await a.tech.api.delete(`/config-items/${item.id}`), 403, 'forbidden');
    // The permission is refused before the body is read.
    refused(await a.tech.api.raw.post('/config-items', { kind: 'nope' }), 403, 'forbidden');
    refused(await t.client().get('/config-items'), 401, 'unauthenticated');
  });
});
