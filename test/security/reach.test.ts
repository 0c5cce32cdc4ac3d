// Reach never grows through configuration. Played as the attacker would: an Organization Admin restricted to one site
// tries to make things that act organisation-wide (an SSO provider that auto-provisions organisation admins, a SCIM
// token, a service account, a webhook, an invitation without sites); a partner technician with a just-in-time grant for
// one site reads organisation-level records by id. Each is refused, and the same act by someone whose reach covers it
// succeeds (the refusal is the reach, not the route).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customFieldDefinitions, ssoProviders } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  createContact,
  createDevice,
  createOrg,
  createPartner,
  createSite,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';
import {
  expectError,
  expectStatus,
  ORG_ADMIN,
  ORG_VIEWER,
  PARTNER_ADMIN,
  PARTNER_TECH,
} from '../onboarding/helpers.js';
import { eq } from 'drizzle-orm';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true', WEBHOOKS_ALLOW_INSECURE: 'true' });
}, 120_000);
afterAll(async () => t?.close());

async function world() {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const siteA = await createSite(t, org.id);
  const siteB = await createSite(t, org.id);
  const deviceA = await createDevice(t, org, siteA.id);
  const siteAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN, siteIds: [siteA.id] });
  const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
  return { partner, org, siteA, siteB, deviceA, siteAdmin, orgAdmin };
}

const provider = (extra: object = {}) => ({
  name: 'Attacker IdP',
  issuer: 'https://idp.attacker.test',
  clientId: 'gatehouse',
  clientSecret: 'client-secret-value',
  ...extra,
});

describe('a site-restricted organisation admin cannot create organisation-wide things', () => {
  it('an SSO provider that auto-provisions organisation admins: 403 permission_ceiling, nothing stored', async () => {
    const w = await world();
    const res = await w.siteAdmin.api.post(
      '/sso/providers',
      provider({ autoProvision: true, defaultRoleId: ORG_ADMIN, allowedDomains: 'victim.test' }),
    );
    expectError(res, 403, 'permission_ceiling');
    expect((res.body as unknown as { missing: string[] }).missing).toEqual(expect.arrayContaining(['siteIds']));
    // Not even a provider that provisions nobody: it is the organisation's sign-in.
    expectError(await w.siteAdmin.api.post('/sso/providers', provider()), 403, 'permission_ceiling');
    expect(await t.deps.db.select().from(ssoProviders).where(eq(ssoProviders.orgId, w.org.id))).toEqual([]);
    // The organisation-wide admin may.
    const ok = await w.orgAdmin.api.post(
      '/sso/providers',
      provider({ autoProvision: true, defaultRoleId: ORG_VIEWER, allowedDomains: 'victim.test' }),
    );
    expect(ok.status, ok.text).toBe(201);
    // And the site admin cannot widen it afterwards (turn on auto-provisioning of admins).
    expectError(
      await w.siteAdmin.api.patch(`/sso/providers/${ok.body.id}`, { defaultRoleId: ORG_ADMIN }),
      403,
      'permission_ceiling',
    );
  });

  it('a SCIM token: 403 permission_ceiling (service accounts and webhooks need permissions Organization Admin lacks)', async () => {
    const w = await world();
    expectError(
      await w.siteAdmin.api.post('/scim-tokens', { name: 'IdP', defaultRoleId: ORG_VIEWER }),
      403,
      'permission_ceiling',
    );
    expectStatus(await w.orgAdmin.api.post('/scim-tokens', { name: 'IdP', defaultRoleId: ORG_VIEWER }), 201);
  });

  it('an invitation reaches no site beyond the inviter’s: omitted sites (everything) or another site are refused', async () => {
    const w = await world();
    const invite = (body: object) =>
      w.siteAdmin.api.post('/users/invite', {
        email: `x-${Math.random()}@victim.test`,
        name: 'X',
        roleId: ORG_VIEWER,
        ...body,
      });
    expectError(await invite({}), 403, 'permission_ceiling');
    expectError(await invite({ siteIds: [w.siteB.id] }), 403, 'permission_ceiling');
    expectStatus(await invite({ siteIds: [w.siteA.id] }), 201);
  });
});

describe('a just-in-time grant for one site never reaches organisation-level records by id', () => {
  it('the organisation (with its settings) and an organisation-level contact: 404', async () => {
    const w = await world();
    const partnerAdmin = await signedInPartnerMember(t, w.partner.id, { roleId: PARTNER_ADMIN });
    const tech = await signedInPartnerMember(t, w.partner.id, {
      roleId: PARTNER_TECH,
      orgAccess: 'eligible',
      orgIds: [w.org.id],
    });
    const contact = await createContact(t, w.org.id);
    const [field] = await t.deps.db
      .insert(customFieldDefinitions)
      .values({
        partnerId: w.partner.id,
        orgId: w.org.id,
        key: 'asset_tag',
        name: 'Asset tag',
        type: 'text',
        entityType: 'device',
      })
      .returning();
    // Before any grant the technician reaches nothing there.
    expectError(await tech.api.get(`/devices/${w.deviceA.id}`), 404, 'not_found');
    expectStatus(
      await tech.api.post('/access/requests', {
        orgId: w.org.id,
        siteId: w.siteA.id,
        durationMinutes: 30,
        reason: 'Disk',
      }),
      201,
    );
    // The grant's own site: reached.
    expectStatus(await tech.api.get(`/devices/${w.deviceA.id}`), 200);
    expectStatus(await tech.api.get(`/orgs/sites/${w.siteA.id}`), 200);
    // Organisation-level records: not reached.
    for (const path of [`/orgs/organizations/${w.org.id}`, `/contacts/${contact.id}`])
      expectError(await tech.api.get(path as `/contacts/${string}`), 404, 'not_found');
    // Changing them needs organizations:write, which a technician's role does not hold: refused before any lookup.
    expectError(
      await tech.api.patch(`/orgs/organizations/${w.org.id}`, { settings: { mspAccess: 'suspended' } }),
      403,
      'forbidden',
    );
    // A Partner Admin with standing access reads them (the refusals above are the grant's reach).
    expectStatus(await partnerAdmin.api.get(`/orgs/organizations/${w.org.id}`), 200);
    expectStatus(await partnerAdmin.api.get(`/custom-fields/${field!.id}`), 200);
  });
});

describe('a site-restricted organisation admin cannot change organisation-level settings', () => {
  it('mspAccess, the IP allow-list, the security policy, the name: 403 permission_ceiling, nothing changed', async () => {
    const w = await world();
    const partnerAdmin = await signedInPartnerMember(t, w.partner.id, { roleId: PARTNER_ADMIN });
    // The partner's staff tightened access; the site admin tries to lift it, and then to loosen the rest.
    expectStatus(
      await w.orgAdmin.api.patch(`/orgs/organizations/${w.org.id}`, { settings: { mspAccess: 'suspended' } }),
      200,
    );
    const attempts: object[] = [
      { settings: { mspAccess: 'allowed' } },
      { settings: { security: { ipAllowlist: ['0.0.0.0/0'] } }, confirmLockout: true },
      { settings: { security: { requireMfa: false } } },
      { name: 'Renamed by a site admin' },
    ];
    for (const body of attempts) {
      const res = await w.siteAdmin.api.patch(`/orgs/organizations/${w.org.id}`, body);
      expectError(res, 403, 'permission_ceiling');
      expect((res.body as unknown as { missing: string[] }).missing).toEqual(['siteIds']);
    }
    const org = expectStatus(await w.orgAdmin.api.get(`/orgs/organizations/${w.org.id}`), 200).body;
    expect(org.settings.mspAccess).toBe('suspended');
    expect(org.name).not.toBe('Renamed by a site admin');
    expectError(await partnerAdmin.api.get(`/orgs/organizations/${w.org.id}`), 403, 'msp_access_denied');
    // The organisation-wide admin may (the refusal is the reach, not the route).
    expectStatus(
      await w.orgAdmin.api.patch(`/orgs/organizations/${w.org.id}`, { settings: { mspAccess: 'allowed' } }),
      200,
    );
  });
});
