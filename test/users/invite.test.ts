// Invitations: mail over real SMTP with an accept link, existing accounts linked
// at once, resend replacing the link, 409 user_exists_in_scope, partner and organisation bodies.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  accountOf,
  createDeviceGroup,
  createOrg,
  createSite,
  createUser,
  partnerAdmin,
  signedInOrgMember,
} from '../support/fixtures.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';

const [PARTNER_ADMIN, PARTNER_TECH, PARTNER_VIEWER, ORG_ADMIN, , ORG_VIEWER] = SYSTEM_ROLES.map(
  (r) => r.id as string,
) as [string, string, string, string, string, string];
const PASSWORD = 'Glacier-7f3a9c-Saffron!';
const email = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}@example.test`;

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

describe('an invitation mail arrives over SMTP with an accept link whose token works', () => {
  it('organisation invite: mail with the link, preview names the organisation, accept activates the user in that organisation', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id, `Acme ${randomBytes(3).toString('hex')}`);
    const to = email('invitee');
    const inv = await api.post('/users/invite', { email: to, name: 'In Vitee', roleId: ORG_VIEWER, orgId: org.id });
    expect(inv.status, inv.text).toBe(201);
    expect(inv.body).toMatchObject({
      email: to,
      name: 'In Vitee',
      status: 'invited',
      roleId: ORG_VIEWER,
      inviteEmailSent: true,
    });

    const m = await mail.waitFor(to);
    expect(m.subject).toContain(org.name);
    expect(m.text).toContain(`${t.baseUrl}/accept-invite?token=`);
    const token = linkToken(m);

    const preview = await t.client().post('/auth/invite/preview', { token });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body).toMatchObject({ email: to, orgName: org.name });

    const accepted = await t.client().post('/auth/accept-invite', { token, password: PASSWORD });
    expect(accepted.status, accepted.text).toBe(200);
    const me = await t.client().withToken(accepted.body.accessToken).get('/users/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      id: inv.body.id,
      email: to,
      status: 'active',
      scope: 'organization',
      orgId: org.id,
      roleId: ORG_VIEWER,
    });

    const row = await api.get(`/users/${inv.body.id}`, { query: { orgId: org.id } });
    expect(row.body.status).toBe('active');
    // The link is single-use.
    expect((await t.client().post('/auth/accept-invite', { token, password: PASSWORD })).body.code).toBe(
      'invite_invalid',
    );
  });

  it('partner invite: the accepted user acts in the partner with the orgAccess and orgIds given', async () => {
    const { api, partner } = await partnerAdmin(t);
    const orgA = await createOrg(t, partner.id);
    await createOrg(t, partner.id);
    const to = email('tech');
    const inv = await api.post('/users/invite', {
      email: to,
      name: 'Tech',
      roleId: PARTNER_TECH,
      orgAccess: 'selected',
      orgIds: [orgA.id],
    });
    expect(inv.status, inv.text).toBe(201);
    const listed = await api.get(`/users/${inv.body.id}`);
    expect(listed.body).toMatchObject({
      orgAccess: 'selected',
      orgIds: [orgA.id],
      roleName: 'Partner Technician',
      status: 'invited',
    });

    const m = await mail.waitFor(to);
    expect(m.subject).toContain(partner.name);
    const accepted = await t.client().post('/auth/accept-invite', { token: linkToken(m), password: PASSWORD });
    expect(accepted.status, accepted.text).toBe(200);
    const me = await t.client().withToken(accepted.body.accessToken).get('/users/me');
    expect(me.body).toMatchObject({ scope: 'partner', partnerId: partner.id, roleId: PARTNER_TECH });
  });
});

describe('an existing account is offered the membership and must accept it', () => {
  it('status pending in the answer, the name given echoed back, a mail with a link to the invitations page; accepted, the account signs in to the new scope', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const to = email('existing');
    const existing = await createUser(t, { email: to, name: 'Already Here', password: PASSWORD });
    const before = mail.countTo(to);
    const inv = await api.post('/users/invite', {
      email: to.toUpperCase(),
      name: 'Ignored Name',
      roleId: ORG_VIEWER,
      orgId: org.id,
    });
    expect(inv.status, inv.text).toBe(201);
    expect(inv.body).toMatchObject({ id: existing.id, status: 'pending', name: 'Ignored Name', inviteEmailSent: true });
    const m = await mail.waitFor(to);
    expect(mail.countTo(to)).toBe(before + 1);
    expect(m.subject).toContain(org.name);
    expect(m.text).toContain(`${t.baseUrl}/invitations?token=`);
    const login = await t.client().post('/auth/login', { email: to, password: PASSWORD });
    expect(login.status, login.text).toBe(200);
    const own = t.client().withToken(login.body.accessToken);
    const [offer] = (await own.get('/auth/invitations')).body.data;
    expect(offer).toMatchObject({ kind: 'organization', orgId: org.id, tenantName: org.name, roleId: ORG_VIEWER });
    expect((await own.post(`/auth/invitations/${offer!.id}/accept`)).status).toBe(200);
    const again = await t.client().post('/auth/login', { email: to, password: PASSWORD });
    const me = await t.client().withToken(again.body.accessToken).get('/users/me');
    expect(me.body).toMatchObject({ scope: 'organization', orgId: org.id });
  });
});

describe('resend replaces the invitation link: the earlier token is dead', () => {
  it('old token → 404 invite_invalid at preview and accept; the new one works', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const to = email('resend');
    const inv = await api.post('/users/invite', { email: to, name: 'Resend Me', roleId: ORG_VIEWER, orgId: org.id });
    const first = linkToken(await mail.waitFor(to));

    const resent = await api.post('/users/resend-invite', { userId: inv.body.id, orgId: org.id });
    expect(resent.status, resent.text).toBe(200);
    expect(resent.body).toEqual({ success: true, inviteEmailSent: true });
    const second = linkToken(await mail.waitFor(to, (m) => !m.text.includes(encodeURIComponent(first))));
    expect(second).not.toBe(first);

    expect((await t.client().post('/auth/invite/preview', { token: first })).body.code).toBe('invite_invalid');
    const dead = await t.client().post('/auth/accept-invite', { token: first, password: PASSWORD });
    expect(dead.status).toBe(404);
    expect(dead.body.code).toBe('invite_invalid');
    const ok = await t.client().post('/auth/accept-invite', { token: second, password: PASSWORD });
    expect(ok.status, ok.text).toBe(200);

    // Once accepted there is nothing to resend.
    const again = await api.post('/users/resend-invite', { userId: inv.body.id, orgId: org.id });
    expect(again.status).toBe(409);
  });

  it('resend for a user outside the scope (or unknown) is 404', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const otherOrg = await createOrg(t, partner.id);
    const inv = await api.post('/users/invite', { email: email('x'), name: 'X', roleId: ORG_VIEWER, orgId: org.id });
    expect((await api.post('/users/resend-invite', { userId: inv.body.id, orgId: otherOrg.id })).status).toBe(404);
    expect((await api.post('/users/resend-invite', { userId: inv.body.id })).status).toBe(404); // not a partner member
    expect(
      (await api.post('/users/resend-invite', { userId: '00000000-0000-4000-8000-00000000abcd', orgId: org.id }))
        .status,
    ).toBe(404);
  });
});

describe('inviting a user already in the scope is 409 user_exists_in_scope', () => {
  it('same address in another case, partner scope and organisation scope', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const to = email('dup');
    expect((await api.post('/users/invite', { email: to, name: 'Dup', roleId: PARTNER_VIEWER })).status).toBe(201);
    const dupPartner = await api.post('/users/invite', {
      email: to.toUpperCase(),
      name: 'Dup',
      roleId: PARTNER_VIEWER,
    });
    expect(dupPartner.status).toBe(409);
    expect(dupPartner.body).toMatchObject({
      code: 'user_exists_in_scope',
      message: 'User already exists in this scope.',
    });
    // The same account may still be invited into an organisation (another scope)...
    expect(
      (await api.post('/users/invite', { email: to, name: 'Dup', roleId: ORG_VIEWER, orgId: org.id })).status,
    ).toBe(201);
    // ...once: inviting again while the offer is pending renews it (one membership).
    const renewed = await api.post('/users/invite', { email: to, name: 'Dup', roleId: ORG_VIEWER, orgId: org.id });
    expect(renewed.body).toMatchObject({ status: 'pending' });
    expect((await api.get('/users', { query: { orgId: org.id } })).body.data).toHaveLength(1);
  });

  it('two concurrent invitations of one new address: one 201, one 409, one account', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const to = email('race');
    const rs = await Promise.all(
      [0, 1].map(() => api.post('/users/invite', { email: to, name: 'Race', roleId: ORG_VIEWER, orgId: org.id })),
    );
    expect(rs.map((r) => r.status).sort()).toEqual([201, 409]);
    const list = await api.get('/users', { query: { orgId: org.id, search: 'race-' } });
    expect(list.body.data).toHaveLength(1);
  });
});

describe('the invitation body fits the scope', () => {
  it('organisation body stores siteIds and deviceGroupIds; omitted lists mean every site and group (null)', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const site = await createSite(t, org.id);
    const group = await createDeviceGroup(t, org.id, { siteId: site.id });
    const restricted = await api.post('/users/invite', {
      email: email('r'),
      name: 'R',
      roleId: ORG_VIEWER,
      orgId: org.id,
      siteIds: [site.id],
      deviceGroupIds: [group.id],
    });
    expect(restricted.status, restricted.text).toBe(201);
    const free = await api.post('/users/invite', { email: email('f'), name: 'F', roleId: ORG_VIEWER, orgId: org.id });
    expect((await api.get(`/users/${restricted.body.id}`, { query: { orgId: org.id } })).body).toMatchObject({
      siteIds: [site.id],
      deviceGroupIds: [group.id],
    });
    expect((await api.get(`/users/${free.body.id}`, { query: { orgId: org.id } })).body).toMatchObject({
      siteIds: null,
      deviceGroupIds: null,
    });
  });

  it('sites, device groups and organisations must belong to the scope (400, nothing created)', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const otherOrg = await createOrg(t, partner.id);
    const foreignSite = await createSite(t, otherOrg.id);
    const foreignGroup = await createDeviceGroup(t, otherOrg.id);
    const other = await partnerAdmin(t);
    const foreignPartnerOrg = await createOrg(t, other.partner.id);
    const to = email('bad');
    const cases = [
      { orgId: org.id, roleId: ORG_VIEWER, siteIds: [foreignSite.id] },
      { orgId: org.id, roleId: ORG_VIEWER, deviceGroupIds: [foreignGroup.id] },
      { roleId: PARTNER_VIEWER, orgAccess: 'selected', orgIds: [foreignPartnerOrg.id] },
      { roleId: PARTNER_VIEWER, siteIds: [foreignSite.id] }, // partner body with organisation fields
      { orgId: org.id, roleId: ORG_VIEWER, orgAccess: 'all' }, // organisation body with partner fields
      { orgId: org.id, roleId: PARTNER_VIEWER }, // a partner role in an organisation
      { roleId: ORG_VIEWER }, // an organisation role in the partner
    ];
    for (const c of cases) {
      const r = await api.raw.post('/users/invite', { email: to, name: 'Bad', ...c });
      expect(r.status, JSON.stringify(c)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    expect((await api.get('/users', { query: { orgId: org.id } })).body.data).toHaveLength(0);
    expect((await api.get('/users', { query: { search: 'bad-' } })).body.data).toHaveLength(0);
  });

  it('a partner admin invites an organisation admin; that admin invites into its own organisation without orgId', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    const inv = await orgAdmin.api.post('/users/invite', { email: email('o'), name: 'O', roleId: ORG_VIEWER });
    expect(inv.status, inv.text).toBe(201);
    expect(
      (await api.get('/users', { query: { orgId: org.id } })).body.data.map((u: { id: string }) => u.id),
    ).toContain(inv.body.id);
    // PARTNER_ADMIN is not a role of an organisation.
    expect(
      (await orgAdmin.api.post('/users/invite', { email: email('o'), name: 'O', roleId: PARTNER_ADMIN })).status,
    ).toBe(400);
  });
});

describe('a removed user keeps the account and can be re-invited', () => {
  it('remove → account row survives, membership gone; re-invite links the active account again', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const to = email('again');
    const inv = await api.post('/users/invite', { email: to, name: 'Again', roleId: ORG_VIEWER, orgId: org.id });
    const accepted = await t
      .client()
      .post('/auth/accept-invite', { token: linkToken(await mail.waitFor(to)), password: PASSWORD });
    expect(accepted.status).toBe(200);

    expect((await api.delete(`/users/${inv.body.id}`, { query: { orgId: org.id } })).status).toBe(200);
    expect(await accountOf(t, inv.body.id)).toMatchObject({ id: inv.body.id, email: to, status: 'active' });
    expect((await api.get(`/users/${inv.body.id}`, { query: { orgId: org.id } })).status).toBe(404);

    const before = mail.countTo(to);
    const again = await api.post('/users/invite', { email: to, name: 'Again', roleId: ORG_VIEWER, orgId: org.id });
    expect(again.status, again.text).toBe(201);
    // The account is its own now: it is offered the membership again and accepts it by the mailed link.
    expect(again.body).toMatchObject({ id: inv.body.id, status: 'pending' });
    const offer = await mail.waitFor(to, (m) => m.text.includes('/invitations?token='));
    expect(mail.countTo(to)).toBe(before + 1);
    const first = await t.client().post('/auth/login', { email: to, password: PASSWORD });
    const link = await t
      .client()
      .withToken(first.body.accessToken)
      .post('/auth/invitations/accept-link', { token: linkToken(offer) });
    expect(link.status, link.text).toBe(200);
    const login = await t.client().post('/auth/login', { email: to, password: PASSWORD });
    expect(login.status).toBe(200);
    expect((await t.client().withToken(login.body.accessToken).get('/users/me')).body).toMatchObject({
      orgId: org.id,
      scope: 'organization',
    });
  });

  it('a removed user who never accepted is re-invited with a fresh working link', async () => {
    const { api, partner } = await partnerAdmin(t);
    const to = email('never');
    const inv = await api.post('/users/invite', { email: to, name: 'Never', roleId: PARTNER_VIEWER });
    const oldToken = linkToken(await mail.waitFor(to));
    expect((await api.delete(`/users/${inv.body.id}`)).status).toBe(200);
    // The withdrawn invitation no longer admits anyone.
    expect((await t.client().post('/auth/accept-invite', { token: oldToken, password: PASSWORD })).status).toBe(404);
    const again = await api.post('/users/invite', { email: to, name: 'Never', roleId: PARTNER_VIEWER });
    expect(again.body).toMatchObject({ id: inv.body.id, status: 'invited' });
    const fresh = linkToken(await mail.waitFor(to, (m) => !m.text.includes(encodeURIComponent(oldToken))));
    expect((await t.client().post('/auth/accept-invite', { token: oldToken, password: PASSWORD })).status).toBe(404);
    const ok = await t.client().post('/auth/accept-invite', { token: fresh, password: PASSWORD });
    expect(ok.status, ok.text).toBe(200);
    expect((await t.client().withToken(ok.body.accessToken).get('/users/me')).body).toMatchObject({
      scope: 'partner',
      partnerId: partner.id,
    });
  });
});
