// Custom-field definitions: partner-wide or one organisation's, settings:read|write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import {
  auditRecords,
  createSite,
  onboardingTenant,
  signedInPartnerMember,
  type OnboardingTenant,
} from '../support/fixtures.js';

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
const fieldError = (res: ApiResponse, field: string) => {
  refused(res, 400, 'validation_failed');
  const keys = Object.keys(res.body.details.fieldErrors);
  expect(
    keys.some((k) => k === field || k.startsWith(`${field}.`)),
    `${field} in ${JSON.stringify(res.body.details)}`,
  ).toBe(true);
};
let n = 0;
const key = () => `field_${++n}`;
async function define(api: ApiClient, body: Record<string, unknown>) {
  const res = await api.post('/custom-fields', {
    key: key(),
    name: 'A field',
    type: 'text',
    entityType: 'device',
    ...body,
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; key: string; orgId: string | null; source: string };
}
const ids = (res: ApiResponse) => (res.body.data as { id: string }[]).map((r) => r.id);

describe('defining a field', () => {
  it('answers 201 with the definition; without orgId from a partner caller it is partner-wide', async () => {
    const res = await a.admin.api.post('/custom-fields', {
      key: 'warranty_end',
      name: 'Warranty end',
      type: 'date',
      entityType: 'device',
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      partnerId: a.partner.id,
      orgId: null,
      key: 'warranty_end',
      name: 'Warranty end',
      type: 'date',
      options: null,
      entityType: 'device',
      source: 'partner',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await a.admin.api.get(`/custom-fields/${res.body.id}`)).body).toEqual(res.body);
    const select = await define(a.admin.api, {
      type: 'select',
      options: ['gold', 'silver'],
      entityType: 'organization',
      orgId: a.orgs[0].id,
    });
    expect(select).toMatchObject({ orgId: a.orgs[0].id, source: 'organization', options: ['gold', 'silver'] });
    for (const type of ['text', 'number', 'boolean']) await define(a.admin.api, { type, entityType: 'contact' });
  });

  it('an organisation caller always defines for its own organisation', async () => {
    expect(await define(a.orgAdmins[0].api, { entityType: 'site' })).toMatchObject({
      orgId: a.orgs[0].id,
      source: 'organization',
    });
    refused(
      await a.orgAdmins[0].api.post('/custom-fields', {
        key: key(),
        name: 'x',
        type: 'text',
        entityType: 'site',
        orgId: a.orgs[1].id,
      }),
      404,
      'not_found',
    );
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ['a select without options', { type: 'select' }, 'options'],
    ['a select with no option', { type: 'select', options: [] }, 'options'],
    [
      'a select with 201 options',
      { type: 'select', options: Array.from({ length: 201 }, (_, i) => `o${i}`) },
      'options',
    ],
    ['a select with repeated options', { type: 'select', options: ['a', 'b', 'a'] }, 'options'],
    ['a select with an empty option', { type: 'select', options: ['a', ' '] }, 'options'],
    ['a select with a non-string option', { type: 'select', options: ['a', 1] }, 'options'],
    ['options on a text field', { type: 'text', options: ['a'] }, 'options'],
    ['options on a number field', { type: 'number', options: ['1'] }, 'options'],
    ['an upper-case key', { key: 'Warranty' }, 'key'],
    ['a key starting with a digit', { key: '1field' }, 'key'],
    ['a key with a dash', { key: 'my-field' }, 'key'],
    ['a 65-character key', { key: `k${'x'.repeat(64)}` }, 'key'],
    ['an unknown type', { type: 'json' }, 'type'],
    ['an unknown entity type', { entityType: 'ticket' }, 'entityType'],
    ['an empty name', { name: '  ' }, 'name'],
    ['a NUL in the name', { name: 'a\u0000b' }, 'name'],
    ['an unknown field', { partnerId: '00000000-0000-4000-8000-000000000001' }, 'partnerId'],
    ['a non-uuid orgId', { orgId: 'org-1' }, 'orgId'],
  ];
  it.each(bad)('refuses %s (400 validation_failed)', async (_label, body, field) => {
    fieldError(
      await a.admin.api.post('/custom-fields', {
        key: key(),
        name: 'A field',
        type: 'text',
        entityType: 'device',
        ...body,
      }),
      field,
    );
  });

  it('accepts a select with exactly 1 and exactly 200 options', async () => {
    await define(a.admin.api, { type: 'select', options: ['only'] });
    await define(a.admin.api, { type: 'select', options: Array.from({ length: 200 }, (_, i) => `o${i}`) });
  });
});

describe('a key is unique per entity type among the definitions in force in an organisation', () => {
  it('a duplicate key for the same owner and entity type is 409; another entity type or organisation is fine', async () => {
    const k = key();
    await define(a.admin.api, { key: k, orgId: a.orgs[0].id });
    refused(
      await a.admin.api.post('/custom-fields', {
        key: k,
        name: 'again',
        type: 'number',
        entityType: 'device',
        orgId: a.orgs[0].id,
      }),
      409,
      'conflict',
    );
    await define(a.admin.api, { key: k, orgId: a.orgs[0].id, entityType: 'site' });
    await define(a.admin.api, { key: k, orgId: a.orgs[1].id });
    // Partner-wide with the key an organisation already uses: values would be named ambiguously.
    refused(
      await a.admin.api.post('/custom-fields', { key: k, name: 'wide', type: 'text', entityType: 'device' }),
      409,
      'conflict',
    );
    const wide = key();
    await define(a.admin.api, { key: wide });
    refused(
      await a.admin.api.post('/custom-fields', { key: wide, name: 'wide', type: 'text', entityType: 'device' }),
      409,
      'conflict',
    );
    refused(
      await a.orgAdmins[1].api.post('/custom-fields', {
        key: wide,
        name: 'shadow',
        type: 'text',
        entityType: 'device',
      }),
      409,
      'conflict',
    );
    // Another partner has its own namespace.
    await define(b.admin.api, { key: wide });
  });

  it('concurrent creations of one key: exactly one wins, the others are 409', async () => {
    const k = key();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 2
          ? a.admin.api.post('/custom-fields', { key: k, name: 'race', type: 'text', entityType: 'device' })
          : a.orgAdmins[0].api.post('/custom-fields', { key: k, name: 'race', type: 'text', entityType: 'device' }),
      ),
    );
    expect(
      results.filter((r) => r.status === 201),
      results.map((r) => r.text).join('\n'),
    ).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(7);
  });
});

describe('partner-wide definitions are in force in every organisation of the partner', () => {
  it("an organisation lists the partner-wide definitions and its own, each with its source; never a sibling's", async () => {
    const wide = await define(a.admin.api, { entityType: 'site' });
    const own0 = await define(a.orgAdmins[0].api, { entityType: 'site' });
    const own1 = await define(a.orgAdmins[1].api, { entityType: 'site' });
    const list0 = await a.orgAdmins[0].api.get('/custom-fields', { query: { entityType: 'site', limit: 200 } });
    expect(list0.status, list0.text).toBe(200);
    expect(ids(list0)).toEqual(expect.arrayContaining([wide.id, own0.id]));
    expect(ids(list0)).not.toContain(own1.id);
    expect(list0.body.data.every((d: { entityType: string }) => d.entityType === 'site')).toBe(true);
    expect(list0.body.data.find((d: { id: string }) => d.id === wide.id)!.source).toBe('partner');
    expect(list0.body.data.find((d: { id: string }) => d.id === own0.id)!.source).toBe('organization');
    const viaPartner = await a.admin.api.get('/custom-fields', { query: { orgId: a.orgs[1].id, limit: 200 } });
    expect(ids(viaPartner)).toEqual(expect.arrayContaining([wide.id, own1.id]));
    expect(ids(viaPartner)).not.toContain(own0.id);
    const partnerLevel = await a.admin.api.get('/custom-fields', { query: { limit: 200 } });
    expect(ids(partnerLevel)).toContain(wide.id);
    expect(partnerLevel.body.data.every((d: { orgId: string | null }) => d.orgId === null)).toBe(true);
    expect((await a.orgAdmins[1].api.get(`/custom-fields/${wide.id}`)).status).toBe(200);
  });

  it('lists page by key without losing or repeating a row', async () => {
    const all = await a.admin.api.get('/custom-fields', { query: { orgId: a.orgs[0].id, limit: 200 } });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await a.admin.api.get('/custom-fields', { query: { orgId: a.orgs[0].id, limit: 3, cursor } });
      expect(page.status, page.text).toBe(200);
      seen.push(...ids(page));
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(ids(all));
    refused(await a.admin.api.get('/custom-fields', { query: { cursor: 'bm9wZQ' } }), 400, 'validation_failed');
    refused(await a.admin.api.get('/custom-fields', { query: { limit: 201 } }), 400, 'validation_failed');
  });

  it('only partner users with orgAccess all create, change or delete one (403 full_org_access_required)', async () => {
    const wide = await define(a.admin.api, { type: 'select', options: ['a', 'b'] });
    refused(
      await a.selected.api.post('/custom-fields', { key: key(), name: 'x', type: 'text', entityType: 'device' }),
      403,
      'full_org_access_required',
    );
    for (const caller of [a.selected, a.orgAdmins[0]]) {
      refused(
        await caller.api.patch(`/custom-fields/${wide.id}`, { name: 'hijacked' }),
        403,
        'full_org_access_required',
      );
      refused(await caller.api.delete(`/custom-fields/${wide.id}`), 403, 'full_org_access_required');
    }
    expect((await a.admin.api.get(`/custom-fields/${wide.id}`)).body.name).toBe('A field');
    // The selected user manages definitions of its organisation.
    const own = await define(a.selected.api, { orgId: a.orgs[0].id });
    expect((await a.selected.api.patch(`/custom-fields/${own.id}`, { name: 'Mine' })).status).toBe(200);
  });
});

describe('changing and deleting a definition', () => {
  it('renames, changes select options, refuses changes of key, type or entity type', async () => {
    const def = await define(a.admin.api, { type: 'select', options: ['a', 'b'], orgId: a.orgs[0].id });
    const res = await a.admin.api.patch(`/custom-fields/${def.id}`, { name: 'Tier', options: ['a', 'b', 'c'] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ name: 'Tier', options: ['a', 'b', 'c'], key: def.key, type: 'select' });
    for (const patch of [{ key: 'other' }, { type: 'text' }, { entityType: 'site' }, { orgId: a.orgs[1].id }, {}])
      refused(await a.admin.api.raw.patch(`/custom-fields/${def.id}`, patch), 400, 'validation_failed');
    fieldError(await a.admin.api.patch(`/custom-fields/${def.id}`, { options: ['a', 'a'] }), 'options');
    const text = await define(a.admin.api, { orgId: a.orgs[0].id });
    fieldError(await a.admin.api.patch(`/custom-fields/${text.id}`, { options: ['x'] }), 'options');
  });

  it('an option still used by a value cannot be removed (409 resource_in_use); an unused one can', async () => {
    const site = await createSite(t, a.orgs[0].id);
    const def = await define(a.admin.api, {
      type: 'select',
      options: ['gold', 'silver', 'bronze'],
      entityType: 'site',
      orgId: a.orgs[0].id,
    });
    const put = await a.admin.api.put('/custom-fields/values', {
      entityType: 'site',
      entityId: site.id,
      values: { [def.key]: 'gold' },
    });
    expect(put.status, put.text).toBe(200);
    const res = await a.admin.api.patch(`/custom-fields/${def.id}`, { options: ['silver', 'bronze'] });
    refused(res, 409, 'resource_in_use');
    expect(res.body.options).toEqual(['gold']);
    expect((await a.admin.api.patch(`/custom-fields/${def.id}`, { options: ['gold', 'silver'] })).status).toBe(200);
  });

  it('deleting a definition deletes its values; create, update and delete are audited', async () => {
    const site = await createSite(t, a.orgs[0].id);
    const def = await define(a.orgAdmins[0].api, { type: 'number', entityType: 'site' });
    await a.orgAdmins[0].api.put('/custom-fields/values', {
      entityType: 'site',
      entityId: site.id,
      values: { [def.key]: 3 },
    });
    await a.orgAdmins[0].api.patch(`/custom-fields/${def.id}`, { name: 'Racks' });
    const del = await a.orgAdmins[0].api.delete(`/custom-fields/${def.id}`);
    expect(del.status, del.text).toBe(200);
    expect(del.body).toEqual({ success: true });
    refused(await a.orgAdmins[0].api.get(`/custom-fields/${def.id}`), 404, 'not_found');
    const values = await a.orgAdmins[0].api.get('/custom-fields/values', {
      query: { entityType: 'site', entityId: site.id },
    });
    expect(values.body.data.map((v: { key: string }) => v.key)).not.toContain(def.key);
    for (const action of ['custom_field.create', 'custom_field.update', 'custom_field.delete']) {
      const recs = await auditRecords(t, action, def.id);
      expect(recs, action).toHaveLength(1);
      expect(recs[0]).toMatchObject({
        partnerId: a.partner.id,
        orgId: a.orgs[0].id,
        resourceType: 'custom_field',
        actorUserId: a.orgAdmins[0].user.id,
      });
    }
  });
});

describe('tenant isolation', () => {
  it("another partner's definitions are 404 on every route and never listed", async () => {
    const wide = await define(a.admin.api, {});
    const own = await define(a.orgAdmins[0].api, {});
    for (const caller of [b.admin, b.orgAdmins[0]]) {
      for (const id of [wide.id, own.id]) {
        refused(await caller.api.get(`/custom-fields/${id}`), 404, 'not_found');
        refused(await caller.api.patch(`/custom-fields/${id}`, { name: 'x' }), 404, 'not_found');
        refused(await caller.api.delete(`/custom-fields/${id}`), 404, 'not_found');
      }
      const list = await caller.api.get('/custom-fields', { query: { limit: 200 } });
      expect(list.status).toBe(200);
      expect(list.body.data.every((d: { partnerId: string }) => d.partnerId === b.partner.id)).toBe(true);
    }
    refused(await b.admin.api.get('/custom-fields', { query: { orgId: a.orgs[0].id } }), 404, 'not_found');
    refused(
      await b.admin.api.post('/custom-fields', {
        key: key(),
        name: 'x',
        type: 'text',
        entityType: 'device',
        orgId: a.orgs[0].id,
      }),
      404,
      'not_found',
    );
  });

  it("a sibling organisation's definitions are 404 to its neighbour and to a partner user without access to it", async () => {
    const other = await define(a.admin.api, { orgId: a.orgs[1].id });
    for (const caller of [a.orgAdmins[0], a.selected]) {
      refused(await caller.api.get(`/custom-fields/${other.id}`), 404, 'not_found');
      refused(await caller.api.patch(`/custom-fields/${other.id}`, { name: 'x' }), 404, 'not_found');
      refused(await caller.api.delete(`/custom-fields/${other.id}`), 404, 'not_found');
      refused(await caller.api.get('/custom-fields', { query: { orgId: a.orgs[1].id } }), 404, 'not_found');
    }
    refused(
      await a.selected.api.post('/custom-fields', {
        key: key(),
        name: 'x',
        type: 'text',
        entityType: 'device',
        orgId: a.orgs[1].id,
      }),
      404,
      'not_found',
    );
  });
});

describe('permissions: settings:read | write', () => {
  it('technicians and viewers (no settings permission) are refused before their input is read', async () => {
    const def = await define(a.admin.api, {});
    for (const caller of [a.tech, a.viewer, a.orgViewer]) {
      refused(await caller.api.get('/custom-fields'), 403, 'forbidden');
      refused(await caller.api.get(`/custom-fields/${def.id}`), 403, 'forbidden');
      refused(await caller.api.raw.post('/custom-fields', { key: 'BAD KEY' }), 403, 'forbidden');
      refused(await caller.api.patch(`/custom-fields/${def.id}`, { name: 'x' }), 403, 'forbidden');
      refused(await caller.api.delete(`/custom-fields/${def.id}`), 403, 'forbidden');
    }
    const reader = await a.admin.api.post('/roles', {
      name: 'Settings reader',
      permissions: [{ resource: 'settings', action: 'read' }],
    });
    expect(reader.status, reader.text).toBe(201);
    const member = await signedInPartnerMember(t, a.partner.id, { roleId: reader.body.id });
    expect((await member.api.get(`/custom-fields/${def.id}`)).status).toBe(200);
    refused(await member.api.patch(`/custom-fields/${def.id}`, { name: 'x' }), 403, 'forbidden');
    refused(await t.client().get('/custom-fields'), 401, 'unauthenticated');
  });
});
