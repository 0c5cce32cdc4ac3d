// Audit events of the onboarding area: every create, update and delete of organisations, sites,
// device groups, devices, enrollment keys, enrolments and contacts is recorded with its actor and the right tenant
// (the partner, and the organisation it concerns); refused or dry-run requests record nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { auditRecords, createOrg, partnerAdmin, signedInOrgMember } from '../support/fixtures.js';
import { createKey, enroll, expectError, expectStatus, ORG_ADMIN } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

interface Expected {
  partnerId: string;
  orgId: string | null;
  actorUserId: string | null;
  resourceType: string;
}

/** Exactly one record of the action about the resource, with the tenant and actor given. */
async function expectEvent(action: string, resourceId: string, e: Expected) {
  const rows = await auditRecords(t, action, resourceId);
  expect(rows, `${action} ${resourceId}`).toHaveLength(1);
  expect(rows[0], action).toMatchObject({
    action,
    result: 'success',
    resourceId,
    resourceType: e.resourceType,
    partnerId: e.partnerId,
    orgId: e.orgId,
    actorUserId: e.actorUserId,
  });
  return rows[0]!;
}

describe('organisations, sites and device groups', () => {
  it('organization.create/update/delete, partner.update, site.* and device_group.* carry the partner and the organisation', async () => {
    const { api, partner, user } = await partnerAdmin(t);
    const by = { partnerId: partner.id, actorUserId: user.id };
    const org = expectStatus(await api.post('/orgs/organizations', { name: 'Audited' }), 201).body;
    await expectEvent('organization.create', org.id, { ...by, orgId: org.id, resourceType: 'organization' });
    expectStatus(
      await api.patch(`/orgs/organizations/${org.id}`, {
        name: 'Audited Ltd',
        settings: { security: { requireMfa: true } },
      }),
      200,
    );
    const upd = await expectEvent('organization.update', org.id, {
      ...by,
      orgId: org.id,
      resourceType: 'organization',
    });
    expect(upd.details).toMatchObject({ changed: ['name', 'settings'] });
    expectStatus(
      await api.patch('/orgs/partners/me', { settings: { security: { allowedMfaMethods: { sms: false } } } }),
      200,
    );
    await expectEvent('partner.update', partner.id, { ...by, orgId: null, resourceType: 'partner' });

    const site = expectStatus(await api.post('/orgs/sites', { orgId: org.id, name: 'HQ' }), 201).body;
    await expectEvent('site.create', site.id, { ...by, orgId: org.id, resourceType: 'site' });
    expectStatus(await api.patch(`/orgs/sites/${site.id}`, { timezone: 'Europe/London' }), 200);
    await expectEvent('site.update', site.id, { ...by, orgId: org.id, resourceType: 'site' });

    const group = expectStatus(
      await api.post('/device-groups', { orgId: org.id, siteId: site.id, name: 'G' }),
      201,
    ).body;
    await expectEvent('device_group.create', group.id, { ...by, orgId: org.id, resourceType: 'device_group' });
    expectStatus(await api.patch(`/device-groups/${group.id}`, { name: 'G2' }), 200);
    await expectEvent('device_group.update', group.id, { ...by, orgId: org.id, resourceType: 'device_group' });
    const key = await createKey(api, { orgId: org.id, siteId: site.id });
    const device = expectStatus(await enroll(t, { enrollmentKey: key.key }), 201).body;
    expectStatus(await api.post(`/device-groups/${group.id}/devices`, { deviceIds: [device.deviceId] }), 200);
    await expectEvent('device_group.devices.add', group.id, { ...by, orgId: org.id, resourceType: 'device_group' });
    expectStatus(await api.delete(`/device-groups/${group.id}`), 200);
    await expectEvent('device_group.delete', group.id, { ...by, orgId: org.id, resourceType: 'device_group' });

    // A refused delete records nothing.
    expectError(await api.delete(`/orgs/sites/${site.id}`), 409, 'resource_in_use');
    expect(await auditRecords(t, 'site.delete', site.id)).toHaveLength(0);
    expectStatus(await api.delete(`/devices/${device.deviceId}`), 200);
    expectStatus(await api.delete(`/orgs/sites/${site.id}`), 200);
    await expectEvent('site.delete', site.id, { ...by, orgId: org.id, resourceType: 'site' });

    expectStatus(await api.delete(`/orgs/organizations/${org.id}`), 200);
    await expectEvent('organization.delete', org.id, { ...by, orgId: org.id, resourceType: 'organization' });
  });

  it("an organisation user's changes carry its organisation and the organisation's partner", async () => {
    const { partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const m = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    const by = { partnerId: partner.id, orgId: org.id, actorUserId: m.user.id };
    expectStatus(await m.api.patch(`/orgs/organizations/${org.id}`, { name: 'Self-renamed' }), 200);
    await expectEvent('organization.update', org.id, { ...by, resourceType: 'organization' });
    const site = expectStatus(await m.api.post('/orgs/sites', { orgId: org.id, name: 'Own site' }), 201).body;
    await expectEvent('site.create', site.id, { ...by, resourceType: 'site' });
    expectStatus(await m.api.delete(`/orgs/sites/${site.id}`), 200);
    await expectEvent('site.delete', site.id, { ...by, resourceType: 'site' });
    const group = expectStatus(await m.api.post('/device-groups', { orgId: org.id, name: 'Own group' }), 201).body;
    await expectEvent('device_group.create', group.id, { ...by, resourceType: 'device_group' });
  });
});

describe('devices, keys and enrolment', () => {
  it('enrollment_key.create/delete, agent.enroll (no actor), device.update/delete', async () => {
    const { api, partner, user } = await partnerAdmin(t);
    const org = expectStatus(await api.post('/orgs/organizations', { name: 'Fleet' }), 201).body;
    const site = expectStatus(await api.post('/orgs/sites', { orgId: org.id, name: 'HQ' }), 201).body;
    const by = { partnerId: partner.id, orgId: org.id, actorUserId: user.id };
    const key = await createKey(api, { orgId: org.id, siteId: site.id, maxUsage: 2 });
    const created = await expectEvent('enrollment_key.create', key.id, { ...by, resourceType: 'enrollment_key' });
    expect(JSON.stringify(created)).not.toContain(key.key);
    const device = expectStatus(await enroll(t, { enrollmentKey: key.key, hostname: 'audited-pc' }), 201).body;
    const enrolled = await expectEvent('agent.enroll', device.deviceId, {
      partnerId: partner.id,
      orgId: org.id,
      actorUserId: null,
      resourceType: 'device',
    });
    expect(enrolled.details).toMatchObject({ hostname: 'audited-pc', enrollmentKeyId: key.id, siteId: site.id });
    expect(JSON.stringify(enrolled)).not.toContain(device.agentToken);
    // Refused enrolments record no agent.enroll.
    const before = (await auditRecords(t, 'agent.enroll')).length;
    expectError(await enroll(t, { enrollmentKey: 'ghek_unknown-key-for-audit' }), 401, 'enrollment_key_invalid');
    expect(await auditRecords(t, 'agent.enroll')).toHaveLength(before);

    expectStatus(await api.patch(`/devices/${device.deviceId}`, { name: 'Reception' }), 200);
    await expectEvent('device.update', device.deviceId, { ...by, resourceType: 'device' });
    expectStatus(await api.delete(`/devices/${device.deviceId}`), 200);
    await expectEvent('device.delete', device.deviceId, { ...by, resourceType: 'device' });
    expectStatus(await api.delete(`/enrollment-keys/${key.id}`), 200);
    await expectEvent('enrollment_key.delete', key.id, { ...by, resourceType: 'enrollment_key' });
  });
});

describe('contacts', () => {
  it('contact.import (not on dry runs or refused files), contact.update and contact.delete', async () => {
    const { api, partner, user } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const by = { partnerId: partner.id, orgId: org.id, actorUserId: user.id };
    const csv = 'externalId,firstName,email\nc-1,Ann,ann@corp.example\nc-2,Bob,bob@corp.example';
    expectStatus(await api.post('/contacts/import', { orgId: org.id, csv, dryRun: true }), 200);
    expectError(
      await api.post('/contacts/import', { orgId: org.id, csv: 'externalId,colour\nc-1,red' }),
      400,
      'invalid_csv',
    );
    expect(await auditRecords(t, 'contact.import', org.id)).toHaveLength(0);
    const res = expectStatus(await api.post('/contacts/import', { orgId: org.id, csv }), 200).body;
    const imported = await expectEvent('contact.import', org.id, { ...by, resourceType: 'organization' });
    expect(imported.details).toMatchObject({
      summary: { created: 2, updated: 0, unchanged: 0, heldBack: 0, failed: 0 },
    });
    const ann = res.rows[0]!.contactId as string;
    expectStatus(await api.patch(`/contacts/${ann}`, { title: 'CFO' }), 200);
    await expectEvent('contact.update', ann, { ...by, resourceType: 'contact' });
    expectStatus(await api.delete(`/contacts/${ann}`), 200);
    await expectEvent('contact.delete', ann, { ...by, resourceType: 'contact' });
  });
});
