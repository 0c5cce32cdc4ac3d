// Partner and organisation security settings: PATCH /orgs/partners/me and
// PATCH /orgs/organizations/:id set them, GET /orgs/organizations/:id/effective-settings shows what is in force (the
// partner's value applies to every organisation and the strictest wins), and requireMfa holds users at 428 until they
// enrol a factor, existing sessions included, from their next request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { createOrg, partnerAdmin, signedInOrgMember, signedInPartnerMember } from '../support/fixtures.js';
import { enrolTotp, expectError, expectStatus, ORG_ADMIN, ORG_VIEWER, PARTNER_ADMIN, PARTNER_TECH } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

const ALL_METHODS = { totp: true, sms: true, passkey: true };
const effective = async (api: ApiClient, orgId: string) =>
  expectStatus(await api.get(`/orgs/organizations/${orgId}/effective-settings`), 200).body;

async function expectHeld(api: ApiClient, allowedMethods = ['totp', 'sms', 'passkey']) {
  const res = await api.get('/orgs/organizations');
  expectError(res, 428, 'mfa_enrollment_required');
  expect(res.body.enrollUrl).toMatch(/^http/);
  expect(res.body.allowedMethods).toEqual(allowedMethods);
}

describe('settings are stored on the partner and the organisation', () => {
  it('PATCH /orgs/partners/me and PATCH /orgs/organizations/:id store security settings; GET shows them', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const p = expectStatus(
      await api.patch('/orgs/partners/me', {
        settings: { security: { requireMfa: true, allowedMfaMethods: { sms: false } } },
      }),
      200,
    );
    expect(p.body).toMatchObject({
      id: partner.id,
      settings: { security: { requireMfa: true, allowedMfaMethods: { sms: false } } },
    });
    expect(expectStatus(await api.get('/orgs/partners/me'), 200).body.settings).toEqual({
      security: { requireMfa: true, allowedMfaMethods: { sms: false } },
    });
    const o = expectStatus(
      await api.patch(`/orgs/organizations/${org.id}`, {
        settings: { security: { allowedMfaMethods: { passkey: false } } },
      }),
      200,
    );
    expect(o.body.settings).toEqual({ security: { allowedMfaMethods: { passkey: false } } });
    expect(expectStatus(await api.get(`/orgs/organizations/${org.id}`), 200).body.settings).toEqual({
      security: { allowedMfaMethods: { passkey: false } },
    });
  });

  it('a PATCH of some settings keeps the others: sending allowedMfaMethods alone never drops requireMfa', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    expectStatus(
      await api.patch(`/orgs/organizations/${org.id}`, {
        settings: { security: { requireMfa: true, allowedMfaMethods: { sms: false } } },
      }),
      200,
    );
    const o = expectStatus(
      await api.patch(`/orgs/organizations/${org.id}`, {
        settings: { security: { allowedMfaMethods: { passkey: false } } },
      }),
      200,
    );
    expect(o.body.settings).toEqual({
      security: { requireMfa: true, allowedMfaMethods: { sms: false, passkey: false } },
    });
    expectStatus(await api.patch('/orgs/partners/me', { settings: { security: { requireMfa: true } } }), 200);
    const p = expectStatus(
      await api.patch('/orgs/partners/me', { settings: { security: { allowedMfaMethods: { totp: true } } } }),
      200,
    );
    expect(p.body.settings).toEqual({ security: { requireMfa: true, allowedMfaMethods: { totp: true } } });
    const off = expectStatus(
      await api.patch('/orgs/partners/me', { settings: { security: { requireMfa: false } } }),
      200,
    );
    expect(off.body.settings.security.requireMfa).toBe(false);
  });

  it('unknown settings and wrong types are refused', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    expectError(
      await api.raw.patch('/orgs/partners/me', { settings: { security: { requireMfa: 'true' } } }),
      400,
      'validation_failed',
    );
    expectError(
      await api.raw.patch('/orgs/partners/me', { settings: { security: { allowedMfaMethods: { email: true } } } }),
      400,
      'validation_failed',
    );
    expectError(await api.raw.patch('/orgs/partners/me', { slug: 'new-slug' }), 400, 'validation_failed');
    expectError(
      await api.raw.patch(`/orgs/organizations/${org.id}`, { settings: { branding: { color: 'red' } } }),
      400,
      'validation_failed',
    );
    expectError(
      await api.raw.patch(`/orgs/organizations/${org.id}`, { settings: { security: { requireMfa: 1 } } }),
      400,
      'validation_failed',
    );
  });

  it('only a partner user with orgAccess all and settings:write changes the partner; organisation users never do', async () => {
    const { partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const selected = await signedInPartnerMember(t, partner.id, {
      roleId: PARTNER_ADMIN,
      orgAccess: 'selected',
      orgIds: [org.id],
    });
    const tech = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_TECH });
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    const orgViewer = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    const body = { settings: { security: { requireMfa: false } } };
    expectError(await selected.api.patch('/orgs/partners/me', body), 403, 'full_org_access_required');
    expectError(await tech.api.patch('/orgs/partners/me', body), 403, 'forbidden');
    expectError(await orgAdmin.api.patch('/orgs/partners/me', body), 403, 'forbidden');
    expectError(await orgViewer.api.patch(`/orgs/organizations/${org.id}`, body), 403, 'forbidden');
    expectError(await tech.api.patch(`/orgs/organizations/${org.id}`, body), 403, 'forbidden');
  });
});

describe('the effective view: the partner applies to every organisation, the strictest wins', () => {
  it('with nothing set: no MFA requirement, every method allowed', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    expect(await effective(api, org.id)).toEqual({
      orgId: org.id,
      security: { requireMfa: false, allowedMfaMethods: ALL_METHODS },
      sources: { partner: {}, organization: {} },
    });
  });

  it("the partner's requireMfa and method bans apply to every organisation; an organisation cannot loosen them", async () => {
    const { api, partner } = await partnerAdmin(t);
    const a = await createOrg(t, partner.id);
    const b = await createOrg(t, partner.id, undefined, {
      security: { requireMfa: false, allowedMfaMethods: { sms: true, totp: true, passkey: true } },
    });
    expectStatus(
      await api.patch('/orgs/partners/me', {
        settings: { security: { requireMfa: true, allowedMfaMethods: { sms: false } } },
      }),
      200,
    );
    for (const org of [a, b]) {
      const eff = await effective(api, org.id);
      expect(eff.security).toEqual({ requireMfa: true, allowedMfaMethods: { totp: true, sms: false, passkey: true } });
      expect(eff.sources.partner).toEqual({ security: { requireMfa: true, allowedMfaMethods: { sms: false } } });
    }
    expect((await effective(api, b.id)).sources.organization).toEqual({
      security: { requireMfa: false, allowedMfaMethods: { sms: true, totp: true, passkey: true } },
    });
    expectStatus(
      await api.patch(`/orgs/organizations/${a.id}`, {
        settings: { security: { requireMfa: false, allowedMfaMethods: { sms: true } } },
      }),
      200,
    );
    expect((await effective(api, a.id)).security).toEqual({
      requireMfa: true,
      allowedMfaMethods: { totp: true, sms: false, passkey: true },
    });
  });

  it("an organisation's stricter value wins over a lenient partner, for that organisation only", async () => {
    const { api, partner } = await partnerAdmin(t);
    const strict = await createOrg(t, partner.id);
    const lenient = await createOrg(t, partner.id);
    expectStatus(
      await api.patch('/orgs/partners/me', {
        settings: { security: { requireMfa: false, allowedMfaMethods: { totp: true, sms: true, passkey: true } } },
      }),
      200,
    );
    expectStatus(
      await api.patch(`/orgs/organizations/${strict.id}`, {
        settings: { security: { requireMfa: true, allowedMfaMethods: { passkey: false } } },
      }),
      200,
    );
    expect((await effective(api, strict.id)).security).toEqual({
      requireMfa: true,
      allowedMfaMethods: { totp: true, sms: true, passkey: false },
    });
    expect((await effective(api, lenient.id)).security).toEqual({ requireMfa: false, allowedMfaMethods: ALL_METHODS });
    // Bans from both levels add up.
    expectStatus(
      await api.patch('/orgs/partners/me', { settings: { security: { allowedMfaMethods: { sms: false } } } }),
      200,
    );
    expect((await effective(api, strict.id)).security.allowedMfaMethods).toEqual({
      totp: true,
      sms: false,
      passkey: false,
    });
    expect((await effective(api, lenient.id)).security.allowedMfaMethods).toEqual({
      totp: true,
      sms: false,
      passkey: true,
    });
  });

  it('an organisation member reads the effective settings of its own organisation only', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const sibling = await createOrg(t, partner.id);
    const member = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    expectStatus(await api.patch('/orgs/partners/me', { settings: { security: { requireMfa: true } } }), 200);
    expect((await effective(member.api, org.id)).security.requireMfa).toBe(true);
    expectError(await member.api.get(`/orgs/organizations/${sibling.id}/effective-settings`), 404, 'not_found');
  });
});

describe('requireMfa holds users at 428 mfa_enrollment_required until they enrol', () => {
  it("an organisation's requireMfa holds its members' existing sessions from their next request, until they enrol", async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const sibling = await createOrg(t, partner.id);
    const member = await signedInOrgMember(t, org, { roleId: ORG_ADMIN, mfaEnabled: false });
    const enrolled = await signedInOrgMember(t, org, { roleId: ORG_ADMIN, mfaEnabled: true });
    const other = await signedInOrgMember(t, sibling, { roleId: ORG_ADMIN, mfaEnabled: false });
    expectStatus(await member.api.get('/orgs/organizations'), 200);

    expectStatus(
      await api.patch(`/orgs/organizations/${org.id}`, {
        settings: { security: { requireMfa: true, allowedMfaMethods: { sms: false } } },
      }),
      200,
    );
    await expectHeld(member.api, ['totp', 'passkey']);
    expectError(await member.api.get(`/orgs/sites`), 428, 'mfa_enrollment_required');
    expectError(
      await member.api.post('/contacts/import', { orgId: org.id, csv: 'externalId,firstName\nx,Y' }),
      428,
      'mfa_enrollment_required',
    );
    expectStatus(await member.api.get('/auth/me'), 200);
    expectStatus(await enrolled.api.get('/orgs/organizations'), 200);
    expectStatus(await other.api.get('/orgs/organizations'), 200);

    await enrolTotp(t, member.api);
    expectStatus(await member.api.get('/orgs/organizations'), 200);
  });

  it("the partner's requireMfa holds the partner's own users and every organisation's users; switching it off releases them", async () => {
    const { api, partner } = await partnerAdmin(t);
    const [a, b] = [await createOrg(t, partner.id), await createOrg(t, partner.id)];
    const tech = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_TECH, mfaEnabled: false });
    const memberA = await signedInOrgMember(t, a, { roleId: ORG_ADMIN, mfaEnabled: false });
    const memberB = await signedInOrgMember(t, b, { roleId: ORG_VIEWER, mfaEnabled: false });
    const outsider = await partnerAdmin(t, { mfaEnabled: true });
    const outsiderTech = await signedInPartnerMember(t, outsider.partner.id, {
      roleId: PARTNER_TECH,
      mfaEnabled: false,
    });
    for (const m of [tech, memberA, memberB]) expectStatus(await m.api.get('/orgs/organizations'), 200);

    expectStatus(
      await api.patch('/orgs/partners/me', {
        settings: { security: { requireMfa: true, allowedMfaMethods: { passkey: false } } },
      }),
      200,
    );
    for (const m of [tech, memberA, memberB]) await expectHeld(m.api, ['totp', 'sms']);
    // An organisation cannot opt out of the partner's requirement.
    expectStatus(
      await api.patch(`/orgs/organizations/${a.id}`, { settings: { security: { requireMfa: false } } }),
      200,
    );
    await expectHeld(memberA.api, ['totp', 'sms']);
    // Another partner is untouched; the partner admin (MFA enrolled) is not held.
    expectStatus(await outsiderTech.api.get('/orgs/organizations'), 200);
    expectStatus(await api.get('/orgs/organizations'), 200);

    await enrolTotp(t, memberB.api);
    expectStatus(await memberB.api.get('/orgs/organizations'), 200);

    expectStatus(await api.patch('/orgs/partners/me', { settings: { security: { requireMfa: false } } }), 200);
    expectStatus(await tech.api.get('/orgs/organizations'), 200);
    expectStatus(await memberA.api.get('/orgs/organizations'), 200);
  });
});
