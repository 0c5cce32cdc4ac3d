// The customer's view and veto: mspAccess through HTTP on two instances, with the mail it sends caught
// by a real SMTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import {
  auditRecords,
  createDevice,
  createOrg,
  createPartner,
  createSite,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { expectError, expectStatus, ORG_ADMIN, PARTNER_ADMIN, PARTNER_TECH } from '../onboarding/helpers.js';

let t: TestApp;
let peer: PeerApp;
let mail: MailCatcher;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url });
  peer = await startPeer(t);
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
  await mail?.close();
});

async function world() {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const device = await createDevice(t, org, (await createSite(t, org.id)).id);
  const partnerAdmin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const tech = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_TECH });
  const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
  return { partner, org, device, partnerAdmin, tech, orgAdmin };
}
const setMsp = (
  who: SignedInMember,
  orgId: string,
  mspAccess: 'allowed' | 'approval_required' | 'suspended',
  headers: Record<string, string> = {},
) => who.api.patch(`/orgs/organizations/${orgId}`, { settings: { mspAccess } }, { headers });

describe('suspended refuses a Partner Admin', () => {
  it('on its records, on a peer, and in lists; the organisation admin still works; allowed again lets them back', async () => {
    const w = await world();
    expectStatus(await w.partnerAdmin.api.get(`/devices/${w.device.id}`), 200);
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'suspended'), 200);
    expectError(await w.partnerAdmin.api.get(`/devices/${w.device.id}`), 403, 'msp_access_denied');
    expectError(await w.partnerAdmin.api.get(`/orgs/organizations/${w.org.id}`), 403, 'msp_access_denied');
    expectError(
      await peer.client().withToken(w.partnerAdmin.session.accessToken).get(`/devices/${w.device.id}`),
      403,
      'msp_access_denied',
    );
    const listed = await w.partnerAdmin.api.get('/orgs/organizations', { query: { limit: 200 } });
    expect(listed.body.data.map((o: { id: string }) => o.id)).not.toContain(w.org.id);
    expectStatus(await w.orgAdmin.api.get(`/devices/${w.device.id}`), 200);
    // Explain names the step.
    const ex = expectStatus(
      await w.orgAdmin.api.get('/access/explain', {
        query: {
          userId: w.partnerAdmin.user.id,
          permission: 'devices:read',
          resourceType: 'device',
          resourceId: w.device.id,
        },
      }),
      200,
    );
    expect(ex.body).toMatchObject({ allowed: false, deniedBy: 'msp_access' });
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'allowed'), 200);
    expectStatus(await w.partnerAdmin.api.get(`/devices/${w.device.id}`), 200);
  });

  it('approval_required holds standing partner members out until the customer approves a grant (test/access/jit.test.ts); the partner may tighten to it, not loosen from it', async () => {
    const w = await world();
    expectStatus(await setMsp(w.partnerAdmin, w.org.id, 'approval_required'), 200);
    expectError(await w.tech.api.get(`/devices/${w.device.id}`), 403, 'msp_access_denied');
    expectError(await w.partnerAdmin.api.get(`/devices/${w.device.id}`), 403, 'msp_access_denied');
    // Held out, the partner cannot even reach the setting to loosen it.
    expectError(await setMsp(w.partnerAdmin, w.org.id, 'allowed'), 403, 'msp_access_denied');
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'allowed'), 200);
    expectStatus(await w.tech.api.get(`/devices/${w.device.id}`), 200);
  });
});

describe("only the organisation's admins loosen mspAccess; the partner may only tighten it", () => {
  it('a partner admin tightens; the organisation admin loosens; the partner (break-glass, in reach) cannot loosen', async () => {
    const w = await world();
    expectStatus(await setMsp(w.partnerAdmin, w.org.id, 'suspended'), 200);
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'allowed'), 200);
    expectStatus(await setMsp(w.partnerAdmin, w.org.id, 'suspended'), 200);
    expectStatus(
      await w.partnerAdmin.api.patch('/orgs/partners/me', {
        settings: { security: { breakGlassUserId: w.partnerAdmin.user.id } },
      }),
      200,
    );
    expectError(
      await setMsp(w.partnerAdmin, w.org.id, 'allowed', { 'x-break-glass-reason': 'customer asked by phone' }),
      403,
      'msp_access_customer_only',
    );
    expect((await w.orgAdmin.api.get(`/orgs/organizations/${w.org.id}`)).body.settings.mspAccess).toBe('suspended');
    // mspAccess is not a partner setting.
    expectError(
      await w.partnerAdmin.api.patch('/orgs/partners/me', { settings: { mspAccess: 'suspended' } }),
      400,
      'validation_failed',
    );
  });

  it('a change is audited and mailed to the admins of both sides', async () => {
    const w = await world();
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'suspended'), 200);
    const [record] = await auditRecords(t, 'organization.msp_access.change', w.org.id);
    expect(record).toMatchObject({
      actorUserId: w.orgAdmin.user.id,
      orgId: w.org.id,
      partnerId: w.partner.id,
      details: { from: 'allowed', to: 'suspended' },
    });
    for (const admin of [w.partnerAdmin, w.orgAdmin]) {
      const m = await mail.waitFor(admin.user.email, (x) => /Partner access to/.test(x.subject));
      expect(m.text).toMatch(/suspended/);
    }
    // A Partner Technician is not an admin: no mail.
    expect(mail.messages.filter((x) => x.to.includes(w.tech.user.email.toLowerCase()))).toHaveLength(0);
  });
});

describe("suspended lets in only the partner's break-glass account, with a reason, alerting both sides", () => {
  it('without a reason 403; with one 200, audited with the reason and mailed to both sides', async () => {
    const w = await world();
    const glass = await signedInPartnerMember(t, w.partner.id, { roleId: PARTNER_ADMIN });
    expectStatus(
      await w.partnerAdmin.api.patch('/orgs/partners/me', {
        settings: { security: { breakGlassUserId: glass.user.id } },
      }),
      200,
    );
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'suspended'), 200);
    expectError(await glass.api.get(`/devices/${w.device.id}`), 403, 'msp_access_denied');
    expectError(
      await w.partnerAdmin.api.get(`/devices/${w.device.id}`, {
        headers: { 'x-break-glass-reason': 'not the designated account' },
      }),
      403,
      'msp_access_denied',
    );
    expectStatus(
      await glass.api.get(`/devices/${w.device.id}`, {
        headers: { 'x-break-glass-reason': 'ransomware on the file server, ticket 4711' },
      }),
      200,
    );
    const m = await mail.waitFor(w.orgAdmin.user.email, (x) => /Break-glass access/.test(x.subject));
    expect(m.text).toMatch(/ticket 4711/);
    await mail.waitFor(w.partnerAdmin.user.email, (x) => /Break-glass access/.test(x.subject));
    const records = await auditRecords(t, 'access.break_glass', w.org.id);
    expect(records[0]).toMatchObject({
      actorUserId: glass.user.id,
      orgId: w.org.id,
      details: { exempted: 'msp_access', reason: 'ransomware on the file server, ticket 4711' },
    });
  });
});

describe('the organisation admin sees every partner member who can reach it, and what they did', () => {
  it('partner-access lists standing members with role and whether mspAccess holds them out; partner-activity lists their actions', async () => {
    const w = await world();
    const selectedElsewhere = await signedInPartnerMember(t, w.partner.id, {
      roleId: PARTNER_TECH,
      orgAccess: 'selected',
      orgIds: [],
    });
    expectStatus(await w.partnerAdmin.api.patch(`/devices/${w.device.id}`, { name: 'renamed by the MSP' }), 200);
    const res = expectStatus(await w.orgAdmin.api.get(`/orgs/organizations/${w.org.id}/partner-access`), 200);
    const ids = res.body.data.map((r: { userId: string }) => r.userId);
    expect(ids).toEqual(expect.arrayContaining([w.partnerAdmin.user.id, w.tech.user.id]));
    expect(ids).not.toContain(selectedElsewhere.user.id);
    expect(res.body.data.find((r: { userId: string }) => r.userId === w.tech.user.id)).toMatchObject({
      roleName: 'Partner Technician',
      access: 'standing',
      orgAccess: 'all',
      until: null,
      reachesNow: true,
    });
    const activity = expectStatus(await w.orgAdmin.api.get(`/orgs/organizations/${w.org.id}/partner-activity`), 200);
    expect(activity.body.data[0]).toMatchObject({ action: 'device.update', actorUserId: w.partnerAdmin.user.id });
    expect(activity.body.data.every((a: { actorUserId: string | null }) => a.actorUserId !== w.orgAdmin.user.id)).toBe(
      true,
    );
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'suspended'), 200);
    const after = expectStatus(
      await w.orgAdmin.api.get(`/orgs/organizations/${w.org.id}/partner-access`, { query: { limit: 1 } }),
      200,
    );
    expect(after.body).toMatchObject({ mspAccess: 'suspended', nextCursor: expect.any(String) });
    expect(after.body.data[0]).toMatchObject({ reachesNow: false, blockedBy: 'msp_access' });
  });
});
