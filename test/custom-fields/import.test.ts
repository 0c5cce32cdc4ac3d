// The custom-field import wizard: preview reports every row and writes nothing; commit writes
// every valid row in one transaction, skips the rest, and a second commit of the same file changes nothing.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import type { RequestBody } from '../support/api-types.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import {
  auditRecords,
  createContact,
  createDevice,
  createDevices,
  createSite,
  onboardingTenant,
  signedInOrgMember,
  type OnboardingTenant,
} from '../support/fixtures.js';

let t: TestApp;
let a: OnboardingTenant;
let b: OnboardingTenant;
let siteLon: { id: string };
let sitePar: { id: string };
const dev: Record<string, { id: string }> = {};

beforeAll(async () => {
  t = await startApp();
  a = await onboardingTenant(t);
  b = await onboardingTenant(t);
  siteLon = await createSite(t, a.orgs[0].id, 'London');
  sitePar = await createSite(t, a.orgs[0].id, 'Paris');
  for (const h of ['pc-01', 'pc-02', 'PC-03']) dev[h] = await createDevice(t, a.orgs[0], siteLon.id, { hostname: h });
  dev['par-01'] = await createDevice(t, a.orgs[0], sitePar.id, { hostname: 'par-01' });
  await createDevice(t, a.orgs[0], siteLon.id, { hostname: 'twin' });
  await createDevice(t, a.orgs[0], sitePar.id, { hostname: 'TWIN' });
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
    (
      await a.orgAdmins[1].api.post('/custom-fields', {
        key: 'org1_only',
        name: 'x',
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
type ImportInput = RequestBody<'post', '/custom-fields/import/preview'>;
const DEVICE_MAPPING = { Tag: 'asset_tag', RAM: 'ram_gb', Managed: 'managed', Warranty: 'warranty_end', Tier: 'tier' };
const DEVICE_CSV = [
  'Hostname,Tag,RAM,Managed,Warranty,Tier',
  'pc-01,A-1,16,yes,2027-06-30,gold',
  'PC-02,A-2,8,false,,silver', // case-insensitive hostname; empty cell leaves the value alone
  'pc-03,A-3,abc,true,2024-13-01,platinum', // three bad cells
  'ghost-99,A-9,4,no,,', // no such device
  'twin,A-7,4,no,,', // two devices answer to this hostname
  ',A-8,4,no,,', // nothing to match on
  'pc-01,A-1b,32,no,,', // the same device again
].join('\n');
const body = (extra: Partial<ImportInput> = {}): ImportInput => ({
  orgId: a.orgs[0].id,
  entityType: 'device',
  csv: DEVICE_CSV,
  matchColumn: 'Hostname',
  mapping: DEVICE_MAPPING,
  ...extra,
});
const values = async (api: ApiClient, entityType: string, entityId: string) =>
  Object.fromEntries(
    (
      (await api.get('/custom-fields/values', { query: { entityType, entityId } })).body.data as {
        key: string;
        value: unknown;
      }[]
    ).map((v) => [v.key, v.value]),
  );
const valueCount = async () => {
  const res = (await t.deps.db.execute(sql`select count(*)::int as n from custom_field_values`)) as unknown as {
    rows: { n: number }[];
  };
  return Number(res.rows[0]!.n);
};

describe('preview: every row matched and checked, nothing written', () => {
  it('reports valid, unmatched and invalid rows with their line, entity and errors', async () => {
    const before = await valueCount();
    const res = await a.admin.api.post('/custom-fields/import/preview', body());
    expect(res.status, res.text).toBe(200);
    expect(res.body.summary).toEqual({ valid: 2, unmatched: 1, invalid: 4 });
    expect(res.body.rows).toEqual([
      { line: 2, entityId: dev['pc-01']!.id, status: 'valid' },
      { line: 3, entityId: dev['pc-02']!.id, status: 'valid' },
      {
        line: 4,
        entityId: dev['PC-03']!.id,
        status: 'invalid',
        errors: [
          expect.stringMatching(/^RAM: /),
          expect.stringMatching(/^Warranty: /),
          expect.stringMatching(/^Tier: /),
        ],
      },
      { line: 5, entityId: null, status: 'unmatched' },
      { line: 6, entityId: null, status: 'invalid', errors: [expect.stringMatching(/matches 2 devices/)] },
      { line: 7, entityId: null, status: 'invalid', errors: [expect.stringMatching(/empty/)] },
      { line: 8, entityId: dev['pc-01']!.id, status: 'invalid', errors: [expect.stringMatching(/line 2/)] },
    ]);
    expect(await valueCount()).toBe(before);
    expect(await auditRecords(t, 'custom_field.import', a.orgs[0].id)).toHaveLength(0);
  });

  it('refuses a mapping to unknown fields (400 validation_failed) and a file without the named columns (400 invalid_csv)', async () => {
    for (const mapping of <Record<string, string>[]>[
      { Tag: 'no_such_field' },
      { Tag: 'rack_count' },
      { Tag: 'org1_only' },
      { Tag: 'asset_tag', RAM: 'asset_tag' },
    ]) {
      const res = await a.admin.api.post('/custom-fields/import/preview', body({ mapping }));
      refused(res, 400, 'validation_failed');
      expect(Object.keys(res.body.details.fieldErrors)[0]).toMatch(/^mapping\./);
    }
    refused(await a.admin.api.post('/custom-fields/import/preview', body({ matchColumn: 'Name' })), 400, 'invalid_csv');
    refused(
      await a.admin.api.post('/custom-fields/import/preview', body({ mapping: { Colour: 'asset_tag' } })),
      400,
      'invalid_csv',
    );
    refused(
      await a.admin.api.post('/custom-fields/import/preview', body({ csv: 'Hostname,Tag,Tag\npc-01,a,b' })),
      400,
      'invalid_csv',
    );
    refused(
      await a.admin.api.post('/custom-fields/import/preview', body({ csv: 'Hostname,Tag\n"pc-01,a' })),
      400,
      'invalid_csv',
    );
    refused(
      await a.admin.api.post('/custom-fields/import/preview', body({ csv: 'Hostname,Tag\npc-01,a,extra' })),
      400,
      'invalid_csv',
    );
    refused(await a.admin.api.post('/custom-fields/import/preview', body({ csv: 'Hostname,Tag' })), 400, 'invalid_csv');
  });

  it('refuses malformed requests (400 validation_failed)', async () => {
    for (const extra of <Record<string, unknown>[]>[
      { csv: '' },
      { entityType: 'ticket' },
      { orgId: 'x' },
      { mapping: {} },
      { mapping: { Tag: 'Bad-Key' } },
      { matchColumn: '' },
      { dryRun: true },
    ]) {
      refused(await a.admin.api.raw.post('/custom-fields/import/preview', body(extra)), 400, 'validation_failed');
    }
    refused(
      await a.admin.api.raw.post('/custom-fields/import/commit', { orgId: a.orgs[0].id }),
      400,
      'validation_failed',
    );
  });
});

describe('commit: valid rows written in one transaction, the rest skipped, idempotent', () => {
  it('writes the valid rows, skips invalid and unmatched ones whole, and a re-commit changes nothing', async () => {
    const res = await a.admin.api.post('/custom-fields/import/commit', body());
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ summary: { written: 2, skipped: 5 } });
    expect(await values(a.admin.api, 'device', dev['pc-01']!.id)).toEqual({
      asset_tag: 'A-1',
      ram_gb: 16,
      managed: true,
      warranty_end: '2027-06-30',
      tier: 'gold',
    });
    expect(await values(a.admin.api, 'device', dev['pc-02']!.id)).toEqual({
      asset_tag: 'A-2',
      ram_gb: 8,
      managed: false,
      tier: 'silver',
    });
    // The invalid row wrote none of its cells, not even the valid ones.
    expect(await values(a.admin.api, 'device', dev['PC-03']!.id)).toEqual({});
    const count = await valueCount();
    const again = await a.admin.api.post('/custom-fields/import/commit', body());
    expect(again.body).toEqual({ summary: { written: 2, skipped: 5 } });
    expect(await valueCount()).toBe(count);
    expect(await values(a.admin.api, 'device', dev['pc-01']!.id)).toEqual({
      asset_tag: 'A-1',
      ram_gb: 16,
      managed: true,
      warranty_end: '2027-06-30',
      tier: 'gold',
    });
    const recs = await auditRecords(t, 'custom_field.import', a.orgs[0].id);
    expect(recs).toHaveLength(2);
    expect(recs[0]).toMatchObject({
      partnerId: a.partner.id,
      orgId: a.orgs[0].id,
      actorUserId: a.admin.user.id,
      details: { entityType: 'device', written: 2, skipped: 5 },
    });
  });

  it('600 rows (several insert batches) and the audit record share one transaction', async () => {
    const org = a.orgs[1];
    const site = await createSite(t, org.id);
    const hosts = Array.from({ length: 600 }, (_, i) => `bulk-${String(i).padStart(4, '0')}`);
    const devices = await createDevices(t, org, site.id, hosts);
    const csv = [
      'host,tag,ram',
      ...hosts.map((h, i) => `${h},T-${i},${i}`),
      'bulk-nope,T-x,1',
      'bulk-0001,T-dup,1',
    ].join('\n');
    const res = await a.admin.api.post('/custom-fields/import/commit', {
      orgId: org.id,
      entityType: 'device',
      csv,
      matchColumn: 'host',
      mapping: { tag: 'asset_tag', ram: 'ram_gb' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.summary).toEqual({ written: 600, skipped: 2 });
    const ids = devices.map((d) => d.id);
    const xmins = (await t.deps.db.execute(
      sql`select distinct xmin::text as x from custom_field_values where entity_id in ${sql`(${sql.join(
        ids.map((id) => sql`${id}`),
        sql`, `,
      )})`}`,
    )) as unknown as { rows: { x: string }[] };
    expect(xmins.rows).toHaveLength(1);
    const [audit] = await auditRecords(t, 'custom_field.import', org.id);
    const auditXmin = (await t.deps.db.execute(
      sql`select xmin::text as x from audit_logs where id = ${audit!.id}`,
    )) as unknown as { rows: { x: string }[] };
    expect(auditXmin.rows[0]!.x).toBe(xmins.rows[0]!.x);
    expect(await values(a.admin.api, 'device', devices[599]!.id)).toEqual({ asset_tag: 'T-599', ram_gb: 599 });
  });
});

describe('matching each entity type', () => {
  it('sites by name (case-insensitive), organisations by name or slug, contacts by externalId or email', async () => {
    const sites = await a.admin.api.post('/custom-fields/import/commit', {
      orgId: a.orgs[0].id,
      entityType: 'site',
      csv: 'site,racks\nlondon,4\nParis,2\nBerlin,1',
      matchColumn: 'site',
      mapping: { racks: 'rack_count' },
    });
    expect(sites.body, sites.text).toEqual({ summary: { written: 2, skipped: 1 } });
    expect(await values(a.admin.api, 'site', siteLon.id)).toEqual({ rack_count: 4 });

    const org = a.orgs[0];
    const orgs = await a.admin.api.post('/custom-fields/import/preview', {
      orgId: org.id,
      entityType: 'organization',
      csv: `org,contract\n${org.slug},MSA-1\n${org.name.toUpperCase()},MSA-2\n${a.orgs[1].name},MSA-3`,
      matchColumn: 'org',
      mapping: { contract: 'contract' },
    });
    expect(orgs.body.rows.map((r: { status: string }) => r.status)).toEqual(['valid', 'invalid', 'unmatched']);
    const one = await a.admin.api.post('/custom-fields/import/commit', {
      orgId: org.id,
      entityType: 'organization',
      csv: `org,contract\n${org.slug},MSA-1`,
      matchColumn: 'org',
      mapping: { contract: 'contract' },
    });
    expect(one.body.summary).toEqual({ written: 1, skipped: 0 });
    expect(await values(a.admin.api, 'organization', org.id)).toEqual({ contract: 'MSA-1' });

    const c1 = await createContact(t, org.id, { externalId: 'crm-1', email: 'ada@example.test' });
    const c2 = await createContact(t, org.id, { externalId: 'crm-2', email: 'grace@example.test' });
    const contacts = await a.admin.api.post('/custom-fields/import/commit', {
      orgId: org.id,
      entityType: 'contact',
      csv: 'who,vip\ncrm-1,yes\nGRACE@example.test,no\ncrm-404,yes',
      matchColumn: 'who',
      mapping: { vip: 'vip' },
    });
    expect(contacts.body.summary).toEqual({ written: 2, skipped: 1 });
    expect(await values(a.admin.api, 'contact', c1.id)).toEqual({ vip: true });
    expect(await values(a.admin.api, 'contact', c2.id)).toEqual({ vip: false });
  });

  it('only entities the caller can see are matched: a site-restricted member finds no device elsewhere', async () => {
    const restricted = await signedInOrgMember(t, a.orgs[0], { siteIds: [siteLon.id] });
    const res = await restricted.api.post('/custom-fields/import/preview', {
      orgId: a.orgs[0].id,
      entityType: 'device',
      csv: 'h,t\npc-01,x\npar-01,y',
      matchColumn: 'h',
      mapping: { t: 'asset_tag' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.rows.map((r: { status: string }) => r.status)).toEqual(['valid', 'unmatched']);
  });
});

describe('tenant isolation and permissions', () => {
  it("another tenant's organisation is 404, for preview and commit", async () => {
    for (const path of ['/custom-fields/import/preview', '/custom-fields/import/commit'] as const) {
      refused(await b.admin.api.post(path, body()), 404, 'not_found');
      refused(await a.orgAdmins[1].api.post(path, body()), 404, 'not_found');
      refused(
        await a.selected.api.post(path, body({ orgId: a.orgs[1].id, mapping: { Tag: 'asset_tag' } })),
        404,
        'not_found',
      );
    }
    // In B's own organisation, A's devices are never matched.
    expect(
      (await b.admin.api.post('/custom-fields', { key: 'asset_tag', name: 'Tag', type: 'text', entityType: 'device' }))
        .status,
    ).toBe(201);
    const own = await b.admin.api.post(
      '/custom-fields/import/preview',
      body({ orgId: b.orgs[0].id, mapping: { Tag: 'asset_tag' } }),
    );
    expect(own.status, own.text).toBe(200);
    expect(own.body.summary).toEqual({ valid: 0, unmatched: 6, invalid: 1 });
    expect(own.body.rows.every((r: { entityId: string | null }) => r.entityId === null)).toBe(true);
  });

  it('preview needs settings:read and the entity read permission; commit settings:write and the entity write permission', async () => {
    refused(await a.tech.api.post('/custom-fields/import/preview', body()), 403, 'forbidden');
    refused(await a.orgViewer.api.post('/custom-fields/import/preview', body()), 403, 'forbidden');
    const role = await a.admin.api.post('/roles', {
      name: 'Field importer',
      permissions: [
        { resource: 'settings', action: 'read' },
        { resource: 'settings', action: 'write' },
        { resource: 'devices', action: 'read' },
      ],
      orgId: a.orgs[0].id,
    });
    expect(role.status, role.text).toBe(201);
    const importer = await signedInOrgMember(t, a.orgs[0], { roleId: role.body.id });
    expect((await importer.api.post('/custom-fields/import/preview', body())).status).toBe(200);
    refused(await importer.api.post('/custom-fields/import/commit', body()), 403, 'forbidden');
    refused(await importer.api.post('/custom-fields/import/preview', body({ entityType: 'site' })), 403, 'forbidden');
    // An organisation admin holds all of them.
    expect((await a.orgAdmins[0].api.post('/custom-fields/import/commit', body())).status).toBe(200);
  });
});
