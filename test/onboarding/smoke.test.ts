import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { partnerAdmin } from '../support/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

it('builds a customer tree and enrols exactly maxUsage devices under 50 concurrent enrolments', async () => {
  const { api } = await partnerAdmin(t);
  const org = await api.post('/orgs/organizations', { name: 'Contoso Ltd' });
  expect(org.status, JSON.stringify(org.body)).toBe(201);
  expect(org.body.slug).toBe('contoso-ltd');
  const site = await api.post('/orgs/sites', { orgId: org.body.id, name: 'London HQ', timezone: 'Europe/London' });
  expect(site.status, JSON.stringify(site.body)).toBe(201);
  const key = await api.post('/enrollment-keys', {
    orgId: org.body.id,
    siteId: site.body.id,
    name: 'wave 1',
    maxUsage: 5,
  });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  expect(key.body.key).toMatch(/^ghek_/);
  const agents = t.client();
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      agents.post('/agents/enroll', { enrollmentKey: key.body.key, hostname: `pc-${i}`, osType: 'windows' }),
    ),
  );
  const statuses = results.map((r) => r.status);
  expect(statuses.filter((s) => s === 201)).toHaveLength(5);
  expect(results.filter((r) => r.status === 401).every((r) => r.body.code === 'enrollment_key_exhausted')).toBe(true);
  const devices = await api.get('/devices', { query: { orgId: org.body.id } });
  expect(devices.body.data).toHaveLength(5);
  expect(devices.body.data.every((d: { siteId: string }) => d.siteId === site.body.id)).toBe(true);
  const enrolled = results.find((r) => r.status === 201)!;
  const inv = await agents.post(
    '/agents/inventory',
    {
      hardware: { cpu: 'x' },
      software: [{ name: 'Chrome', version: '1' }],
      patches: [{ id: 'KB1', status: 'missing' }],
    },
    { token: enrolled.body.agentToken },
  );
  expect(inv.status, JSON.stringify(inv.body)).toBe(200);
  const detail = await api.get(`/devices/${enrolled.body.deviceId}`);
  expect(detail.body.inventory!.software).toEqual([{ name: 'Chrome', version: '1' }]);
  const eff = await api.get(`/orgs/organizations/${org.body.id}/effective-settings`);
  expect(eff.status).toBe(200);
});

it('imports contacts idempotently, holds back fuzzy matches, reports bad rows, and streams text/csv', async () => {
  const { api } = await partnerAdmin(t);
  const org = await api.post('/orgs/organizations', { name: 'Fabrikam' });
  await api.post('/orgs/sites', { orgId: org.body.id, name: 'Paris' });
  const csv = [
    'externalId,previousId,firstName,lastName,email,phone,title,site',
    'c-1,old-1,Ada,Lovelace,ada@fabrikam.test,+44 20 7946 0000,CTO,Paris',
    'c-2,,Alan,Turing,alan@fabrikam.test,,,',
    'c-3,,Bad,Row,not-an-email,,,',
    'c-4,,Alan,Turing,a.l.a.n+it@fabrikam.test,,,',
    'c-5,,Grace,Hopper,grace@fabrikam.test,,,Nowhere',
  ].join('\n');
  const first = await api.post('/contacts/import', { orgId: org.body.id, csv });
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect(first.body.summary).toEqual({ created: 2, updated: 0, unchanged: 0, heldBack: 1, failed: 2 });
  expect(first.body.rows.find((r) => r.externalId === 'c-3')).toMatchObject({
    line: 4,
    status: 'failed',
  });
  expect(first.body.rows.find((r) => r.externalId === 'c-4')).toMatchObject({
    status: 'held_back',
    match: { reason: 'name' },
  });
  const again = await api.request('POST', '/contacts/import', {
    rawBody: csv,
    contentType: 'text/csv',
    query: { orgId: org.body.id },
  });
  expect(again.status, JSON.stringify(again.body)).toBe(200);
  expect(again.body.summary).toEqual({ created: 0, updated: 0, unchanged: 2, heldBack: 1, failed: 2 });
  const acked = await api.post('/contacts/import', {
    orgId: org.body.id,
    csv,
    acknowledge: [{ externalId: 'c-4', action: 'create' }],
    dryRun: true,
  });
  expect(acked.body.summary.created).toBe(1);
  const list = await api.get('/contacts', { query: { orgId: org.body.id } });
  expect(list.body.data).toHaveLength(2);
});
