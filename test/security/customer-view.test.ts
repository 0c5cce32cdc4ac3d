// The customer sees every credential of its partner that can reach it, not only people. Played as a partner that would
// rather keep its robots out of sight: its Partner Admin makes a partner-wide service account and one for the
// organisation, and uses them; the customer's admin reads the partner-access view. A second partner's service account,
// and one made for another organisation, are there to show the view lists exactly the partner's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import {
  createDevice,
  createOrg,
  createPartner,
  createSite,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';
import { serviceAccountWithKey } from '../support/service-accounts.js';
import { expectStatus, ORG_ADMIN, PARTNER_ADMIN, PARTNER_TECH } from '../onboarding/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
}, 120_000);
afterAll(async () => t?.close());

describe("the customer's partner-access view lists the partner's service accounts that reach it", () => {
  it('name, role, last use and whether the controls hold them out; nobody else’s accounts', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const other = await createOrg(t, partner.id);
    const site = await createSite(t, org.id);
    const device = await createDevice(t, org, site.id);
    const partnerAdmin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    const rival = await createPartner(t);
    const rivalAdmin = await signedInPartnerMember(t, rival.id, { roleId: PARTNER_ADMIN });

    const partnerWide = await serviceAccountWithKey(partnerAdmin.api, { roleId: PARTNER_TECH });
    const madeForOrg = await serviceAccountWithKey(partnerAdmin.api, { roleId: ORG_ADMIN, orgId: org.id });
    const forOtherOrg = await serviceAccountWithKey(partnerAdmin.api, { roleId: ORG_ADMIN, orgId: other.id });
    const rivals = await serviceAccountWithKey(rivalAdmin.api, { roleId: PARTNER_TECH });
    expectStatus(await partnerWide.api.get(`/devices/${device.id}`), 200);

    const view = async () =>
      expectStatus(
        await orgAdmin.api.get(`/orgs/organizations/${org.id}/partner-access`, { query: { limit: 50 } }),
        200,
      ).body;
    const first = await view();
    const ids = first.serviceAccounts.map((a) => a.id);
    expect(ids).toEqual([partnerWide.account.id, madeForOrg.account.id]);
    for (const absent of [forOtherOrg.account.id, rivals.account.id]) expect(ids).not.toContain(absent);
    const [wide, forOrg] = first.serviceAccounts;
    expect(wide).toMatchObject({
      name: partnerWide.account.name,
      owner: 'partner',
      roleId: PARTNER_TECH,
      roleName: 'Partner Technician',
      disabled: false,
      reachesNow: true,
      blockedBy: null,
    });
    expect(wide!.lastUsedAt).not.toBeNull();
    expect(forOrg).toMatchObject({ owner: 'organization', roleId: ORG_ADMIN, lastUsedAt: null, reachesNow: true });

    // Suspended: both are shown held out by mspAccess, as their requests are.
    expectStatus(
      await orgAdmin.api.patch(`/orgs/organizations/${org.id}`, { settings: { mspAccess: 'suspended' } }),
      200,
    );
    const held = await view();
    expect(held.serviceAccounts.map((a) => [a.reachesNow, a.blockedBy])).toEqual([
      [false, 'msp_access'],
      [false, 'msp_access'],
    ]);
    // A disabled account is listed, reaching nothing.
    expectStatus(
      await orgAdmin.api.patch(`/orgs/organizations/${org.id}`, { settings: { mspAccess: 'allowed' } }),
      200,
    );
    expectStatus(await partnerAdmin.api.patch(`/service-accounts/${madeForOrg.account.id}`, { disabled: true }), 200);
    const after = await view();
    expect(after.serviceAccounts.find((a) => a.id === madeForOrg.account.id)).toMatchObject({
      disabled: true,
      reachesNow: false,
    });
  });
});
