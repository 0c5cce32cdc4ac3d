// The onboarding example (examples/onboarding/onboard.ts) runs end to end against the real app: partner registration
// with TOTP enrolment, the Northwind tree (3 sites), contacts imported then re-imported unchanged, a site-pinned key,
// 3 agents enrolled, and device custom fields loaded through the import wizard.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { onboard } from '../../examples/onboarding/onboard.js';
import { startApp, type TestApp } from '../support/app.js';
import { expectStatus } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ ENABLE_REGISTRATION: 'true' });
});
afterAll(async () => t?.close());

it('onboard() builds the Northwind customer through the public API', async () => {
  const logged: string[] = [];
  const result = await onboard({ baseUrl: t.baseUrl, log: (m) => logged.push(m) });

  expect(Object.keys(result.sites).sort()).toEqual(['Northwind HQ', 'Northwind Leeds', 'Northwind Warehouse']);
  expect(result.contacts).toEqual([
    { created: 5, updated: 0, unchanged: 0, heldBack: 0, failed: 0 },
    { created: 0, updated: 0, unchanged: 5, heldBack: 0, failed: 0 },
  ]);
  expect(result.devices).toHaveLength(3);
  expect(result.customFields.preview).toEqual({ valid: 3, unmatched: 0, invalid: 0 });
  expect(result.customFields.commit).toEqual({ written: 3, skipped: 0 });
  expect(logged.length).toBeGreaterThan(5);

  // What the example left behind, read back through the API as its admin.
  const api = t.client().withToken(result.accessToken);
  const sites = expectStatus(await api.get('/orgs/sites', { query: { orgId: result.orgId } }), 200).body.data as {
    id: string;
    name: string;
    timezone: string;
  }[];
  expect(sites.map((s) => [s.name, s.timezone])).toEqual([
    ['Northwind HQ', 'Europe/London'],
    ['Northwind Leeds', 'Europe/London'],
    ['Northwind Warehouse', 'Europe/Dublin'],
  ]);
  const hq = sites.find((s) => s.name === 'Northwind HQ')!;
  const devices = expectStatus(await api.get('/devices', { query: { orgId: result.orgId } }), 200).body.data as {
    id: string;
    hostname: string;
    siteId: string;
    deviceGroupIds: string[];
  }[];
  expect(devices.map((d) => d.hostname)).toEqual(['NW-HQ-001', 'NW-HQ-002', 'NW-LDS-001']);
  expect(devices.every((d) => d.siteId === hq.id)).toBe(true);
  expect(devices.filter((d) => d.deviceGroupIds.length === 1)).toHaveLength(2);
  const key = expectStatus(await api.get(`/enrollment-keys/${result.keyId}`), 200).body;
  expect(key).toMatchObject({ siteId: hq.id, maxUsage: 4, usageCount: 3 });
  const contacts = expectStatus(await api.get('/contacts', { query: { orgId: result.orgId } }), 200).body.data as {
    externalId: string;
    siteId: string | null;
  }[];
  expect(contacts.map((c) => c.externalId).sort()).toEqual(['nw-001', 'nw-002', 'nw-003', 'nw-004', 'nw-005']);
  expect(contacts.filter((c) => c.siteId === null).map((c) => c.externalId)).toEqual(['nw-005']);
  const first = devices.find((d) => d.hostname === 'NW-HQ-001')!;
  const values = expectStatus(
    await api.get('/custom-fields/values', { query: { entityType: 'device', entityId: first.id } }),
    200,
  ).body.data as { key: string; value: unknown }[];
  expect(Object.fromEntries(values.map((v) => [v.key, v.value]))).toEqual({
    asset_tag: 'AT-1001',
    warranty_end: '2027-03-31',
    critical: true,
  });
});
