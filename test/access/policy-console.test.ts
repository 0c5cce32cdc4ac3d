// What the console's per-tenant pages read: the members who do not meet the security policy (and the reminder an
// admin sends them), and the caller's capabilities, each decided by the pipeline's own functions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  auditRecords,
  createOrg,
  createPartner,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { expectError, member } from '../mfa/helpers.js';

const PARTNER_TECHNICIAN = SYSTEM_ROLES[1].id;
const ORG_TECHNICIAN = SYSTEM_ROLES[4].id;

let t: TestApp;
let mail: MailCatcher;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

async function partnerRequiringMfa() {
  const partner = await createPartner(t);
  const admin = await signedInPartnerMember(t, partner.id);
  const set = await admin.api.patch('/orgs/partners/me', { settings: { security: { requireMfa: true } } });
  expect(set.status, set.text).toBe(200);
  const tech = await member(t, { kind: 'partner', partnerId: partner.id, roleId: PARTNER_TECHNICIAN });
  return { partner, admin, tech };
}

describe('who does not comply is the pipeline’s verdict', () => {
  it('a partner requiring MFA lists its technician without a factor, not its admin with one', async () => {
    const { admin, tech } = await partnerRequiringMfa();
    const res = await admin.api.get('/access/compliance');
    expect(res.status, res.text).toBe(200);
    expect(res.body.tenant).toMatchObject({ type: 'partner', orgId: null });
    expect(res.body.data).toEqual([
      {
        userId: tech.user.id,
        name: tech.user.name,
        email: tech.email,
        roleName: 'Partner Technician',
        missing: 'second_factor',
      },
    ]);
  });

  it('without a policy nobody is listed', async () => {
    const partner = await createPartner(t);
    const admin = await signedInPartnerMember(t, partner.id);
    await member(t, { kind: 'partner', partnerId: partner.id, roleId: PARTNER_TECHNICIAN });
    expect((await admin.api.get('/access/compliance')).body.data).toEqual([]);
  });

  it("an organisation's admin sees its own people; another partner's admin gets 404 for that organisation", async () => {
    const { partner, admin } = await partnerRequiringMfa();
    const org = await createOrg(t, partner.id);
    const orgAdmin = await signedInOrgMember(t, org);
    const orgTech = await member(t, { partnerId: partner.id, orgId: org.id, roleId: ORG_TECHNICIAN });
    const own = await orgAdmin.api.get('/access/compliance');
    expect(own.status, own.text).toBe(200);
    expect(own.body.data.map((m: { userId: string }) => m.userId)).toEqual([orgTech.user.id]);
    expect((await admin.api.get('/access/compliance', { query: { orgId: org.id } })).body.data).toHaveLength(1);

    const stranger = await signedInPartnerMember(t, (await createPartner(t)).id);
    expectError(await stranger.api.get('/access/compliance', { query: { orgId: org.id } }), 404, 'not_found');
  });
});

describe('the reminder mail is sent once a day, audited, and only by someone who may change users', () => {
  it('the admin reminds; the technician gets the mail; a second reminder the same day is skipped', async () => {
    const { admin, tech } = await partnerRequiringMfa();
    const first = await admin.api.post('/access/compliance/reminders', {});
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ reminded: [tech.user.id], skipped: [] });
    const got = await mail.waitFor(tech.email, (m) => /two-step verification/.test(m.subject));
    expect(got.text).toContain('/enroll-mfa');
    const again = await admin.api.post('/access/compliance/reminders', { userIds: [tech.user.id] });
    expect(again.body).toEqual({ reminded: [], skipped: [tech.user.id] });
    const records = await auditRecords(t, 'security.compliance_reminder');
    const mine = records.filter((r) => r.actorUserId === admin.user.id);
    expect(mine.map((r) => r.details)).toEqual([
      { reminded: [tech.user.id], skipped: [] },
      { reminded: [], skipped: [tech.user.id] },
    ]);
  });

  it('a technician who may not change users cannot send reminders', async () => {
    const { partner } = await partnerRequiringMfa();
    const tech = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_TECHNICIAN });
    expectError(await tech.api.post('/access/compliance/reminders', {}), 403, 'forbidden');
  });

  it('a burst of reminder batches is cut off at 429', async () => {
    const { admin } = await partnerRequiringMfa();
    const answers = [];
    for (let i = 0; i < 11; i++) answers.push((await admin.api.post('/access/compliance/reminders', {})).status);
    expect(answers.slice(0, 10).every((s) => s === 200)).toBe(true);
    expect(answers[10]).toBe(429);
  });
});

describe("the caller's capabilities are the decision explain gives", () => {
  it('an organisation admin may update its organisation but not delete it, and is told why', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const orgAdmin = await signedInOrgMember(t, org);
    const res = await orgAdmin.api.get('/access/capabilities');
    expect(res.status, res.text).toBe(200);
    type Row = { action: string; allowed: boolean; reason: string | null };
    const by = Object.fromEntries((res.body.actions as Row[]).map((a) => [a.action, a]));
    expect(by['organization.update']).toMatchObject({ allowed: true, reason: null });
    expect(by['organization.delete']!.allowed).toBe(false);
    expect(by['organization.delete']!.reason).toEqual(expect.stringContaining('organizations:delete'));
    // The same refusal the route gives.
    expectError(await orgAdmin.api.delete(`/orgs/organizations/${org.id}`), 403, 'forbidden');
  });

  it('a partner admin may delete the organisation; a technician with selected access may not, with the reason', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const admin = await signedInPartnerMember(t, partner.id);
    const res = await admin.api.get('/access/capabilities', { query: { orgId: org.id } });
    expect(res.body.actions.find((a: { action: string }) => a.action === 'organization.delete')).toMatchObject({
      allowed: true,
    });
    const tech = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_TECHNICIAN });
    const techRes = await tech.api.get('/access/capabilities', { query: { orgId: org.id } });
    const del = techRes.body.actions.find((a: { action: string }) => a.action === 'organization.delete') as
      | { allowed: boolean; reason: string | null }
      | undefined;
    expect(del!.allowed).toBe(false);
    expect(del!.reason).toBeTruthy();
  });

  it("another partner's organisation is 404, not a list of refusals", async () => {
    const org = await createOrg(t, (await createPartner(t)).id);
    const stranger = await signedInPartnerMember(t, (await createPartner(t)).id);
    expectError(await stranger.api.get('/access/capabilities', { query: { orgId: org.id } }), 404, 'not_found');
  });
});

describe('each page’s capabilities agree with the route they stand for', () => {
  type Row = { action: string; allowed: boolean; reason: string | null };
  const ORG_VIEWER = SYSTEM_ROLES[5].id;

  it.each([
    ['an organisation viewer', ORG_VIEWER],
    ['an organisation technician', ORG_TECHNICIAN],
    ['an organisation admin', SYSTEM_ROLES[3].id],
  ])('%s: refused exactly where the route answers 403, with a reason', async (_who, roleId) => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const m = await signedInOrgMember(t, org, { roleId });
    const res = await m.api.get('/access/capabilities');
    expect(res.status, res.text).toBe(200);
    const by = Object.fromEntries((res.body.actions as Row[]).map((a) => [a.action, a]));
    const uniq = Math.random().toString(36).slice(2, 8);
    // One real request per action, as the page would make it.
    const attempts: Record<string, () => Promise<{ status: number }>> = {
      'sso.manage': () => m.api.post('/sso/providers', { name: 'IdP', issuer: 'https://93.184.215.14', clientId: 'x' }),
      'domains.manage': () => m.api.post('/domains', { domain: `d-${uniq}.example.com` }),
      'webhooks.manage': () => m.api.post('/webhooks', { url: 'https://93.184.215.14/hook', events: ['nothing.'] }),
      'roles.manage': () =>
        m.api.post('/roles', { name: `R ${uniq}`, permissions: [{ resource: 'devices', action: 'read' }] }),
      'users.invite': () =>
        m.api.post('/users/invite', { email: `i-${uniq}@example.test`, name: 'I', roleId: ORG_VIEWER }),
      'enrollment_keys.manage': () => m.api.post('/enrollment-keys', { orgId: org.id, name: `K ${uniq}` }),
    };
    for (const [action, attempt] of Object.entries(attempts)) {
      const answer = by[action]!;
      const status = (await attempt()).status;
      expect({ action, forbidden: status === 403 }).toEqual({ action, forbidden: !answer.allowed });
      if (!answer.allowed) expect(answer.reason, action).toBeTruthy();
    }
  });
});
