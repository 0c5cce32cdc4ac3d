// A new partner's getting-started checklist ticks itself from the partner's data as each step is done through the API,
// shows nothing of another partner's progress, and answers only the partner's own administrators.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { expectStatus } from '../support/client.js';
import { callbackFor, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { createOrg, createPartner, createSite, signedInOrgMember, signedInPartnerMember } from '../support/fixtures.js';
import { expectError } from '../mfa/helpers.js';
import { createKey, enroll } from './helpers.js';

const PARTNER_TECHNICIAN = SYSTEM_ROLES[1].id;
let t: TestApp;
let idp: TestIdp;

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
});

const PATH = '/orgs/partners/me/getting-started';

describe('the checklist ticks from real state', () => {
  it('each step is ticked once the API has done it, and only then', async () => {
    const partner = await createPartner(t, 'Tailspin MSP');
    const other = await createPartner(t);
    const admin = await signedInPartnerMember(t, partner.id);
    const otherAdmin = await signedInPartnerMember(t, other.id);
    const done = async () => {
      const res = expectStatus(await admin.api.get(PATH), 200);
      expect(res.body.partnerName).toBe('Tailspin MSP');
      return Object.fromEntries(res.body.items.map((i: { id: string; done: boolean }) => [i.id, i.done]));
    };
    const initial = expectStatus(await admin.api.get(PATH), 200).body;
    expect(initial.complete).toBe(false);
    expect(initial.items.map((i: { id: string; link: string }) => [i.id, i.link])).toEqual([
      ['organization', '/tenants'],
      ['technician', '/users'],
      ['require_mfa', '/security'],
      ['staff_sso', '/sso'],
      ['first_device', '/onboarding/enrollment-keys'],
      ['audit_webhook', '/integrations/webhooks'],
    ]);
    expect(Object.values(await done()).some(Boolean)).toBe(false);

    const org = expectStatus(await admin.api.post('/orgs/organizations', { name: 'Wingtip Dental' }), 201).body;
    expect((await done()).organization).toBe(true);

    expectStatus(
      await admin.api.post('/users/invite', { email: 'ben@tailspin.example', name: 'Ben', roleId: PARTNER_TECHNICIAN }),
      201,
    );
    expect((await done()).technician).toBe(true);

    expectStatus(await admin.api.patch('/orgs/partners/me', { settings: { security: { requireMfa: true } } }), 200);
    expect((await done()).require_mfa).toBe(true);

    // An SSO provider counts once it is in use (active), not while it is a draft.
    const idpBody = { name: 'Staff IdP', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret };
    const provider = expectStatus(await admin.api.post('/sso/providers', idpBody), 201).body;
    expect((await done()).staff_sso).toBe(false);
    expectStatus(await admin.api.post(`/sso/providers/${provider.id}/status`, { status: 'active' }), 200);
    expect((await done()).staff_sso).toBe(true);

    const site = await createSite(t, org.id);
    const key = await createKey(admin.api, { orgId: org.id, siteId: site.id });
    expect((await done()).first_device).toBe(false);
    expectStatus(await enroll(t, { enrollmentKey: key.key }), 201);
    expect((await done()).first_device).toBe(true);

    expectStatus(await admin.api.post('/webhooks', { url: 'https://93.184.215.14/hook', events: ['*'] }), 201);
    const last = expectStatus(await admin.api.get(PATH), 200).body;
    expect(last.complete).toBe(true);

    // The other partner's checklist saw none of it.
    const theirs = expectStatus(await otherAdmin.api.get(PATH), 200).body;
    expect(theirs.items.filter((i: { done: boolean }) => i.done)).toEqual([]);
  });
});

describe('only the partner’s administrators read it', () => {
  it('a technician without settings:write and an organisation’s admin are refused', async () => {
    const partner = await createPartner(t);
    const tech = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_TECHNICIAN });
    expectError(await tech.api.get(PATH), 403, 'forbidden');
    const orgAdmin = await signedInOrgMember(t, await createOrg(t, partner.id));
    expectError(await orgAdmin.api.get(PATH), 403, 'forbidden');
    expect((await t.client().get(PATH)).status).toBe(401);
  });
});
