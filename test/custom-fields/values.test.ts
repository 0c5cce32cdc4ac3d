// Custom-field values: JSON of their field's type, on entities the caller can see, read with the
// entity's read permission and written with its write permission.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import type { RequestBody } from '../support/api-types.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import {
  auditRecords,
  createContact,
  createDevice,
  createDeviceGroup,
  createSite,
  onboardingTenant,
  signedInOrgMember,
  type OnboardingTenant,
} from '../support/fixtures.js';

type EntityType = RequestBody<'put', '/custom-fields/values'>['entityType'];
let t: TestApp;
let a: OnboardingTenant;
let b: OnboardingTenant;
let site1: { id: string };
let site2: { id: string };
let group1: { id: string };
let dev1: { id: string };
let dev2: { id: string };
let devB: { id: string };
let contact0: { id: string };
let contact1: { id: string };

beforeAll(async () => {
  t = await startApp();
  a = await onboardingTenant(t);
  b = await onboardingTenant(t);
  site1 = await createSite(t, a.orgs[0].id);
  site2 = await createSite(t, a.orgs[0].id);
  group1 = await createDeviceGroup(t, a.orgs[0].id);
  dev1 = await createDevice(t, a.orgs[0], site1.id, { groupIds: [group1.id] });
  dev2 = await createDevice(t, a.orgs[0], site2.id);
  const siteB = await createSite(t, b.orgs[0].id);
  devB = await createDevice(t, b.orgs[0], siteB.id);
  contact0 = await createContact(t, a.orgs[0].id, { email: 'ada@example.test' });
  contact1 = await createContact(t, a.orgs[1].id, { email: 'bob@example.test' });
  const defs = [
    { key: 'asset_tag', type: 'text', entityType: 'device' },
    { key: 'ram_gb', type: 'number', entityType: 'device' },
    { key: 'managed', type: 'boolean', entityType: 'device' },
    { key: 'warranty_end', type: 'date', entityType: 'device' },
    { key: 'tier', type: 'select', options: ['gold', 'silver'], entityType: 'device' },
    { key: 'rack_count', type: 'number', entityType: 'site' },
    { key: 'contract', type: 'text', entityType: 'organization' },
    { key: 'vip', type: 'boolean', entityType: 'contact' },
  ] as const;
  for (const d of defs) expect((await a.admin.api.post('/custom-fields', { name: d.key, ...d })).status).toBe(201);
  expect(
    (await b.admin.api.post('/custom-fields', { key: 'asset_tag', name: 'B tag', type: 'text', entityType: 'device' }))
      .status,
  ).toBe(201);
  expect(
    (
      await a.orgAdmins[1].api.post('/custom-fields', {
        key: 'org1_only',
        name: 'Only org 1',
        type: 'text',
        entityType: 'device',
      })
    ).status,
  ).toBe(201);
});
afterAll(async () => t?.close());

const refused = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ code, error: expect.any(String), message: expect.any(String) });
};
const put = (api: ApiClient, entityType: EntityType, entityId: string, values: Record<string, unknown>) =>
  api.put('/custom-fields/values', { entityType, entityId, values });
const get = (api: ApiClient, entityType: string, entityId: string) =>
  api.get('/custom-fields/values', { query: { entityType, entityId } });
const asMap = (res: ApiResponse) =>
  Object.fromEntries((res.body.data as { key: string; value: unknown }[]).map((v) => [v.key, v.value]));

describe('values are JSON of their type', () => {
  it('stores and answers a number, a boolean, a "YYYY-MM-DD" date, a string and a select option as such', async () => {
    const values = { asset_tag: 'A-0042', ram_gb: 15.5, managed: false, warranty_end: '2028-02-29', tier: 'gold' };
    const res = await put(a.admin.api, 'device', dev1.id, values);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual(
      Object.entries(values)
        .map(([key, value]) => ({ key, value }))
        .sort((x, y) => x.key.localeCompare(y.key)),
    );
    const read = await get(a.orgAdmins[0].api, 'device', dev1.id);
    expect(read.status, read.text).toBe(200);
    expect(asMap(read)).toEqual(values);
    expect(typeof asMap(read).ram_gb).toBe('number');
    expect(asMap(read).managed).toBe(false);
  });

  const wrong: [string, string, unknown][] = [
    ['a number field refuses "abc"', 'ram_gb', 'abc'],
    ['a number field refuses a numeric string', 'ram_gb', '42'],
    ['a number field refuses a boolean', 'ram_gb', true],
    ['a date field refuses month 13', 'warranty_end', '2024-13-01'],
    ['a date field refuses 30 February', 'warranty_end', '2024-02-30'],
    ['a date field refuses 29 February of a common year', 'warranty_end', '2023-02-29'],
    ['a date field refuses an unpadded month', 'warranty_end', '2024-1-01'],
    ['a date field refuses a timestamp', 'warranty_end', '2024-01-01T00:00:00Z'],
    ['a date field refuses a number', 'warranty_end', 20240101],
    ['a select refuses an unknown option', 'tier', 'platinum'],
    ['a select refuses another case', 'tier', 'Gold'],
    ['a boolean refuses "true"', 'managed', 'true'],
    ['a boolean refuses 1', 'managed', 1],
    ['a text field refuses a number', 'asset_tag', 42],
    ['a text field refuses an object', 'asset_tag', { a: 1 }],
    ['a text field refuses more than 4096 characters', 'asset_tag', 'x'.repeat(4097)],
    ['a text field refuses a NUL', 'asset_tag', 'a\u0000b'],
    ['a text field refuses an unpaired surrogate', 'asset_tag', 'a\ud800b'],
  ];
  it.each(wrong)('%s (400 validation_failed, nothing written)', async (_label, k, value) => {
    const before = asMap(await get(a.admin.api, 'device', dev1.id));
    const res = await put(a.admin.api, 'device', dev1.id, { managed: true, [k]: value });
    refused(res, 400, 'validation_failed');
    expect(res.body.details.fieldErrors).toHaveProperty([`values.${k}`]);
    expect(asMap(await get(a.admin.api, 'device', dev1.id))).toEqual(before);
  });

  it('null clears a value; unknown keys, keys of another entity type or organisation, and empty sets are refused', async () => {
    expect((await put(a.admin.api, 'device', dev2.id, { asset_tag: 'T-1', ram_gb: 8 })).status).toBe(200);
    const cleared = await put(a.admin.api, 'device', dev2.id, { asset_tag: null });
    expect(cleared.status, cleared.text).toBe(200);
    expect(asMap(cleared)).toEqual({ ram_gb: 8 });
    for (const values of [{ no_such_field: 1 }, { rack_count: 1 }, { org1_only: 'x' }]) {
      const res = await put(a.admin.api, 'device', dev2.id, values);
      refused(res, 400, 'validation_failed');
      expect(res.body.details.fieldErrors).toHaveProperty([`values.${Object.keys(values)[0]}`]);
    }
    refused(await put(a.admin.api, 'device', dev2.id, {}), 400, 'validation_failed');
    refused(await put(a.admin.api, 'device', dev2.id, { 'Bad Key': 1 }), 400, 'validation_failed');
    refused(
      await a.admin.api.raw.put('/custom-fields/values', {
        entityType: 'device',
        entityId: dev2.id,
        values: { ram_gb: 1 },
        extra: 1,
      }),
      400,
      'validation_failed',
    );
    refused(
      await a.admin.api.raw.put('/custom-fields/values', {
        entityType: 'ticket',
        entityId: dev2.id,
        values: { ram_gb: 1 },
      }),
      400,
      'validation_failed',
    );
    refused(
      await a.admin.api.get('/custom-fields/values', { query: { entityType: 'device', entityId: 'nope' } }),
      400,
      'validation_failed',
    );
    refused(
      await a.admin.api.get('/custom-fields/values', { query: { entityType: 'device' } }),
      400,
      'validation_failed',
    );
    expect(asMap(await get(a.admin.api, 'device', dev2.id))).toEqual({ ram_gb: 8 });
  });

  it("sites, organisations and contacts carry their own fields; an organisation's own field applies to its entities only", async () => {
    expect(asMap(await put(a.orgAdmins[0].api, 'site', site1.id, { rack_count: 4 }))).toEqual({ rack_count: 4 });
    expect(asMap(await put(a.orgAdmins[0].api, 'organization', a.orgs[0].id, { contract: 'MSA-7' }))).toEqual({
      contract: 'MSA-7',
    });
    expect(asMap(await put(a.orgAdmins[0].api, 'contact', contact0.id, { vip: true }))).toEqual({ vip: true });
    const dev3 = await createDevice(t, a.orgs[1], (await createSite(t, a.orgs[1].id)).id);
    expect(asMap(await put(a.orgAdmins[1].api, 'device', dev3.id, { org1_only: 'yes', ram_gb: 2 }))).toEqual({
      org1_only: 'yes',
      ram_gb: 2,
    });
  });

  it('a change is audited with the entity and the keys, in its organisation', async () => {
    await put(a.orgAdmins[0].api, 'site', site2.id, { rack_count: 9 });
    const recs = await auditRecords(t, 'custom_field.values.update', site2.id);
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({
      partnerId: a.partner.id,
      orgId: a.orgs[0].id,
      resourceType: 'site',
      actorUserId: a.orgAdmins[0].user.id,
      details: { fields: ['rack_count'], cleared: [] },
    });
  });
});

describe('the entity must be visible to the caller', () => {
  it('a site-restricted member reaches devices and sites of its sites only (others 404)', async () => {
    const restricted = await signedInOrgMember(t, a.orgs[0], { siteIds: [site1.id] });
    expect((await get(restricted.api, 'device', dev1.id)).status).toBe(200);
    refused(await get(restricted.api, 'device', dev2.id), 404, 'not_found');
    refused(await put(restricted.api, 'device', dev2.id, { ram_gb: 1 }), 404, 'not_found');
    refused(await get(restricted.api, 'site', site2.id), 404, 'not_found');
    refused(await put(restricted.api, 'site', site2.id, { rack_count: 1 }), 404, 'not_found');
    expect((await put(restricted.api, 'site', site1.id, { rack_count: 5 })).status).toBe(200);
  });

  it('a device-group-restricted member reaches devices of its groups only', async () => {
    const grouped = await signedInOrgMember(t, a.orgs[0], { deviceGroupIds: [group1.id] });
    expect((await put(grouped.api, 'device', dev1.id, { ram_gb: 32 })).status).toBe(200);
    refused(await put(grouped.api, 'device', dev2.id, { ram_gb: 32 }), 404, 'not_found');
    refused(await get(grouped.api, 'device', dev2.id), 404, 'not_found');
  });

  it("a sibling organisation's entities are 404 to an organisation user and to a partner user without access to it", async () => {
    refused(await get(a.orgAdmins[1].api, 'device', dev1.id), 404, 'not_found');
    refused(await put(a.orgAdmins[1].api, 'organization', a.orgs[0].id, { contract: 'x' }), 404, 'not_found');
    refused(await get(a.orgAdmins[0].api, 'contact', contact1.id), 404, 'not_found');
    refused(await put(a.orgAdmins[0].api, 'contact', contact1.id, { vip: false }), 404, 'not_found');
    refused(await get(a.selected.api, 'organization', a.orgs[1].id), 404, 'not_found');
    refused(await put(a.selected.api, 'contact', contact1.id, { vip: true }), 404, 'not_found');
    expect((await put(a.selected.api, 'contact', contact0.id, { vip: false })).status).toBe(200);
  });

  it("another partner's entities are 404, and its field keys do not apply here", async () => {
    for (const [type, id] of [
      ['device', dev1.id],
      ['site', site1.id],
      ['organization', a.orgs[0].id],
      ['contact', contact0.id],
    ] as const) {
      refused(await get(b.admin.api, type, id), 404, 'not_found');
      refused(await put(b.admin.api, type, id, { asset_tag: 'stolen' }), 404, 'not_found');
    }
    // Partner B defines only asset_tag: a's other keys are unknown on B's own device.
    refused(await put(b.admin.api, 'device', devB.id, { ram_gb: 1 }), 400, 'validation_failed');
    refused(await get(a.admin.api, 'device', devB.id), 404, 'not_found');
    expect(asMap(await get(a.admin.api, 'device', dev1.id)).asset_tag).toBe('A-0042');
  });
});

describe("permissions: the entity's read permission to read, its write permission to write", () => {
  it('an organisation viewer reads device values but cannot write them', async () => {
    expect((await get(a.orgViewer.api, 'device', dev1.id)).status).toBe(200);
    refused(await put(a.orgViewer.api, 'device', dev1.id, { ram_gb: 1 }), 403, 'forbidden');
  });

  it('a partner technician (devices:write; sites and organisations read-only) writes device values only', async () => {
    expect((await put(a.tech.api, 'device', dev1.id, { ram_gb: 64 })).status).toBe(200);
    refused(await put(a.tech.api, 'site', site1.id, { rack_count: 1 }), 403, 'forbidden');
    refused(await put(a.tech.api, 'organization', a.orgs[0].id, { contract: 'x' }), 403, 'forbidden');
    refused(await put(a.tech.api, 'contact', contact0.id, { vip: true }), 403, 'forbidden');
    expect((await get(a.tech.api, 'contact', contact0.id)).status).toBe(200);
    // The refusal comes before the rest of the input is validated.
    refused(
      await a.tech.api.raw.put('/custom-fields/values', { entityType: 'site', entityId: 'not-a-uuid', values: 'nope' }),
      403,
      'forbidden',
    );
  });

  it('a role without devices:read cannot read device values', async () => {
    const role = await a.admin.api.post('/roles', {
      name: 'Sites only',
      permissions: [{ resource: 'sites', action: 'read' }],
      orgId: a.orgs[0].id,
    });
    expect(role.status, role.text).toBe(201);
    const member = await signedInOrgMember(t, a.orgs[0], { roleId: role.body.id });
    refused(await get(member.api, 'device', dev1.id), 403, 'forbidden');
    expect((await get(member.api, 'site', site1.id)).status).toBe(200);
    refused(
      await t.client().get('/custom-fields/values', { query: { entityType: 'device', entityId: dev1.id } }),
      401,
      'unauthenticated',
    );
  });
});
