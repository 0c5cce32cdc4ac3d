// What the partner's staff made for an organisation is held while the organisation suspends its partner's access.
// Played as a partner that prepared its way back in before the customer said no: its Partner Admin invites an
// organisation admin, sets up the organisation's SSO provider (auto-provisioning admins), issues a SCIM token and an
// organisation-admin service account, and subscribes a webhook, all for the customer's organisation. The customer then
// sets mspAccess suspended, and each of those is tried. What the customer's own admin made keeps working, and lifting
// the suspension brings the partner's back.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, webhookDeliveries } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import { proveDomain } from '../support/dns.js';
import { accountOf, createOrg, createPartner, signedInOrgMember, signedInPartnerMember } from '../support/fixtures.js';
import { callbackFor, runSsoLogin, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { issueScimToken, ScimClient } from '../support/scim.js';
import { serviceAccountWithKey } from '../support/service-accounts.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { createActiveProvider, freshDomain, idpUser } from '../sso/helpers.js';
import { expectError, expectStatus, ORG_ADMIN, ORG_VIEWER, PARTNER_ADMIN } from '../onboarding/helpers.js';

const PASSWORD = 'correct horse battery staple 42';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

let t: TestApp;
let mail: MailCatcher;
let idp: TestIdp;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url, SSO_ALLOW_INSECURE_ISSUERS: 'true', WEBHOOKS_ALLOW_INSECURE: 'true' });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
}, 120_000);
afterAll(async () => {
  await idp?.close();
  await t?.close();
  await mail?.close();
});

async function world() {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const partnerAdmin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
  return { partner, org, partnerAdmin, orgAdmin };
}
type World = Awaited<ReturnType<typeof world>>;

const setMsp = async (w: World, mspAccess: 'allowed' | 'approval_required' | 'suspended') =>
  expectStatus(await w.orgAdmin.api.patch(`/orgs/organizations/${w.org.id}`, { settings: { mspAccess } }), 200);

async function invitationLink(w: World, inviter: World['orgAdmin'], roleId: string) {
  const email = `invitee-${Math.random().toString(36).slice(2)}@customer.test`;
  const made = expectStatus(
    await inviter.api.post('/users/invite', { email, name: 'Invitee', roleId, orgId: w.org.id }),
    201,
  );
  return { userId: made.body.id, token: linkToken(await mail.waitFor(email, (m) => /accept-invite/.test(m.text))) };
}

describe('an invitation link made by partner staff cannot be accepted while suspended', () => {
  it('preview and acceptance answer 403 msp_access_denied; the customer’s own link works; lifting lets it through', async () => {
    const w = await world();
    const partners = await invitationLink(w, w.partnerAdmin, ORG_ADMIN);
    const customers = await invitationLink(w, w.orgAdmin, ORG_VIEWER);
    const partnersLink = partners.token;
    const customersLink = customers.token;
    await setMsp(w, 'suspended');

    expectError(await t.client().post('/auth/invite/preview', { token: partnersLink }), 403, 'msp_access_denied');
    expectError(
      await t.client().post('/auth/accept-invite', { token: partnersLink, password: PASSWORD }),
      403,
      'msp_access_denied',
    );
    // No admin was made: the invited account has no password and cannot sign in.
    expect((await accountOf(t, partners.userId))?.status).toBe('invited');

    expectStatus(await t.client().post('/auth/accept-invite', { token: customersLink, password: PASSWORD }), 200);
    await setMsp(w, 'allowed');
    expectStatus(await t.client().post('/auth/accept-invite', { token: partnersLink, password: PASSWORD }), 200);
  });
});

describe('an SSO provider made by partner staff signs nobody in to the organisation while suspended', () => {
  it('the callback refuses with msp_access_denied, and a code minted before the suspension is refused too; approval_required does not hold it', async () => {
    const w = await world();
    const domain = freshDomain();
    await proveDomain(w.partnerAdmin.api, domain, w.org.id);
    await createActiveProvider(w.partnerAdmin.api, idp, w.org.id, {
      autoProvision: true,
      defaultRoleId: ORG_ADMIN,
      allowedDomains: domain,
    });
    // A code minted while allowed, to be exchanged after the suspension.
    const early = await runSsoLogin(t, w.org.id, { idp, user: idpUser(`early@${domain}`) });
    expect(early.ssoCode, early.location ?? '').toBeTruthy();
    await setMsp(w, 'suspended');

    const held = await runSsoLogin(t, w.org.id, { idp, user: idpUser(`newadmin@${domain}`) });
    expect(held.error).toBe('msp_access_denied');
    expectError(await t.client().post('/sso/exchange', { code: early.ssoCode! }), 403, 'msp_access_denied');
    const refused = await t.deps.db
      .select({ details: auditLogs.details })
      .from(auditLogs)
      .where(and(eq(auditLogs.orgId, w.org.id), eq(auditLogs.action, 'auth.login.failed')));
    expect(refused.map((r) => (r.details as { reason?: string }).reason)).toContain('msp_access_denied');

    // approval_required admits the partner's staff grant by grant; the organisation's own people still sign in.
    await setMsp(w, 'approval_required');
    const back = await runSsoLogin(t, w.org.id, { idp, user: idpUser(`newadmin@${domain}`) });
    expect(back.ssoCode, back.location ?? '').toBeTruthy();
    expectStatus(await t.client().post('/sso/exchange', { code: back.ssoCode! }), 200);
  });

  it('the customer’s own provider keeps signing its people in while the partner is suspended', async () => {
    const w = await world();
    const domain = freshDomain();
    await proveDomain(w.orgAdmin.api, domain);
    await createActiveProvider(w.orgAdmin.api, idp, null, {
      autoProvision: true,
      defaultRoleId: ORG_VIEWER,
      allowedDomains: domain,
    });
    await setMsp(w, 'suspended');
    const own = await runSsoLogin(t, w.org.id, { idp, user: idpUser(`staff@${domain}`) });
    expect(own.ssoCode, own.location ?? '').toBeTruthy();
    expectStatus(await t.client().post('/sso/exchange', { code: own.ssoCode! }), 200);
  });
});

describe('no credential the partner made can create or empower an organisation admin while suspended', () => {
  it('a partner-made SCIM token cannot provision an admin; a partner-made admin service account cannot assign roles', async () => {
    const w = await world();
    const scimToken = await issueScimToken(w.partnerAdmin.api, {
      orgId: w.org.id,
      defaultRoleId: ORG_ADMIN,
      name: 'Partner IdP sync',
    });
    const robot = await serviceAccountWithKey(w.partnerAdmin.api, { roleId: ORG_ADMIN, orgId: w.org.id });
    const scim = new ScimClient(t.baseUrl, scimToken.token);
    // While allowed, the token provisions (the partner's act shows in the customer's view, named by token).
    const first = `first-${Date.now().toString(36)}@customer.test`;
    const made = await scim.post('/Users', { schemas: [USER], userName: first, emails: [{ value: first }] });
    expect(made.status, made.text).toBe(201);
    const viewer = await signedInOrgMember(t, w.org, { roleId: ORG_VIEWER });
    await setMsp(w, 'suspended');

    // SCIM: refused before anything is written, whether creating an account or raising an existing one.
    const email = `lifter-${Date.now().toString(36)}@customer.test`;
    const res = await scim.post('/Users', { schemas: [USER], userName: email, emails: [{ value: email }] });
    expect(res.status, res.text).toBe(403);
    expect(res.body.code).toBe('msp_access_denied');
    expect((await scim.patch(`/Users/${made.body.id}`, { schemas: [], Operations: [] })).status).toBe(403);
    // The service account: no role change, no invitation, no lifting of the suspension.
    expectError(await robot.api.post(`/users/${viewer.user.id}/role`, { roleId: ORG_ADMIN }), 403, 'msp_access_denied');
    expectError(
      await robot.api.post('/users/invite', { email, name: 'Lifter', roleId: ORG_ADMIN }),
      403,
      'msp_access_denied',
    );
    expectError(
      await robot.api.patch(`/orgs/organizations/${w.org.id}`, { settings: { mspAccess: 'allowed' } }),
      403,
      'msp_access_denied',
    );
    const roles = expectStatus(await w.orgAdmin.api.get(`/users/${viewer.user.id}`), 200).body;
    expect(roles.roleId).toBe(ORG_VIEWER);
    const members = expectStatus(await w.orgAdmin.api.get('/users', { query: { search: 'lifter-' } }), 200);
    expect(members.body.data).toEqual([]);

    const activity = expectStatus(
      await w.orgAdmin.api.get(`/orgs/organizations/${w.org.id}/partner-activity`, { query: { limit: 200 } }),
      200,
    ).body.data;
    const byToken = activity.find((a) => a.actorType === 'scim_token');
    expect(byToken).toMatchObject({ actorUserId: null, actorName: 'Partner IdP sync', formerStaff: false });
  });
});

describe('a webhook partner staff made for the organisation gets nothing while suspended', () => {
  it('no delivery is queued to it for records written during the suspension', async () => {
    const w = await world();
    const partners = expectStatus(
      await w.partnerAdmin.api.post('/webhooks', { url: 'http://127.0.0.1:9/partner', events: ['*'], orgId: w.org.id }),
      201,
    ).body;
    await setMsp(w, 'suspended');
    const site = expectStatus(await w.orgAdmin.api.post('/orgs/sites', { orgId: w.org.id, name: 'Quiet room' }), 201);
    const [record] = await t.deps.db
      .select({ id: auditLogs.id })
      .from(auditLogs)
      .where(and(eq(auditLogs.action, 'site.create'), eq(auditLogs.resourceId, site.body.id)));
    const queued = await t.deps.db
      .select({ webhookId: webhookDeliveries.webhookId })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.auditId, record!.id));
    expect(queued.map((d) => d.webhookId)).not.toContain(partners.id);
  });
});

describe('an invitation partner staff offered to an existing account is held while suspended', () => {
  it('accepting it, by id or by the mailed link, answers 403 msp_access_denied and leaves it pending; lifting lets it through', async () => {
    const w = await world();
    // Someone with an account already (a member elsewhere, address proven), offered an organisation admin role.
    const other = await createPartner(t);
    const elsewhere = await signedInOrgMember(t, await createOrg(t, other.id), { roleId: ORG_VIEWER });
    const email = elsewhere.user.email;
    const offered = expectStatus(
      await w.partnerAdmin.api.post('/users/invite', { email, name: 'Existing', roleId: ORG_ADMIN, orgId: w.org.id }),
      201,
    );
    expect(offered.body.status).toBe('pending');
    const token = linkToken(await mail.waitFor(email, (m) => m.text.includes('/invitations?token=')));
    const [invitation] = expectStatus(await elsewhere.api.get('/auth/invitations'), 200).body.data;
    await setMsp(w, 'suspended');

    expectError(await elsewhere.api.post(`/auth/invitations/${invitation!.id}/accept`, {}), 403, 'msp_access_denied');
    expectError(await elsewhere.api.post('/auth/invitations/accept-link', { token }), 403, 'msp_access_denied');
    expect(expectStatus(await elsewhere.api.get('/auth/invitations'), 200).body.data).toHaveLength(1);

    await setMsp(w, 'allowed');
    expectStatus(await elsewhere.api.post('/auth/invitations/accept-link', { token }), 200);
    expect(expectStatus(await elsewhere.api.get('/auth/invitations'), 200).body.data).toHaveLength(0);
  });
});
