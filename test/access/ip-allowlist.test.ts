// IP allow-lists of partners and organisations through HTTP. The app trusts X-Forwarded-For (TRUST_PROXY),
// so a test can speak from any address, as clients behind the operator's proxy do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import {
  addPartnerMember,
  auditRecords,
  createDevice,
  createOrg,
  createPartner,
  createSite,
  createUser,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { expectError, expectStatus, ORG_TECH, PARTNER_ADMIN, PARTNER_TECH } from '../onboarding/helpers.js';
import { CSRF_COOKIE, PASSWORD } from '../auth/helpers.js';

let t: TestApp;
let peer: PeerApp;
beforeAll(async () => {
  t = await startApp({ TRUST_PROXY: 'true' });
  peer = await startPeer(t);
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
});

const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
const OFFICE = '203.0.113.0/24';
const OFFICE_IP = '203.0.113.7';
const HOME_IP = '198.51.100.23';

async function partnerWithAdmin() {
  const partner = await createPartner(t);
  const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  return { partner, admin };
}
const setPartnerList = (admin: SignedInMember, list: string[], ip: string, extra: object = {}) =>
  admin.api.patch('/orgs/partners/me', { settings: { security: { ipAllowlist: list } }, ...extra }, from(ip));

describe('an allow-listed token replayed from another address is refused', () => {
  it('a partner list: the same access token works from the office and is 403 ip_not_allowed from elsewhere, on a peer too', async () => {
    const { admin } = await partnerWithAdmin();
    expectStatus(await setPartnerList(admin, [OFFICE, '2001:db8::/32'], OFFICE_IP), 200);
    expectStatus(await admin.api.get('/users/me', from(OFFICE_IP)), 200);
    expectStatus(await admin.api.get('/users/me', from('2001:db8::42')), 200);
    expectError(await admin.api.get('/users/me', from(HOME_IP)), 403, 'ip_not_allowed');
    expectError(await admin.api.get('/users/me', from('2001:db9::1')), 403, 'ip_not_allowed');
    // Another instance reads the same list on the same request.
    const onPeer = peer.client().withToken(admin.session.accessToken);
    expectError(await onPeer.get('/users/me', from(HOME_IP)), 403, 'ip_not_allowed');
    expectStatus(await onPeer.get('/users/me', from(OFFICE_IP)), 200);
    // Emptying the list lifts it on the next request.
    expectStatus(await setPartnerList(admin, [], OFFICE_IP), 200);
    expectStatus(await admin.api.get('/users/me', from(HOME_IP)), 200);
  });

  it('entries are validated and stored normalised (a bare address is one host)', async () => {
    const { admin } = await partnerWithAdmin();
    expectError(
      await setPartnerList(admin, ['10.0.0.0/33'], OFFICE_IP, { confirmLockout: true }),
      400,
      'validation_failed',
    );
    expectError(
      await setPartnerList(admin, ['not-an-address'], OFFICE_IP, { confirmLockout: true }),
      400,
      'validation_failed',
    );
    const res = expectStatus(
      await setPartnerList(admin, ['203.0.113.7', '203.0.113.99/24', '2001:DB8:0:0::1/64'], OFFICE_IP),
      200,
    );
    expect(res.body.settings.security.ipAllowlist).toEqual(['203.0.113.7/32', '203.0.113.0/24', '2001:db8::/64']);
  });
});

describe('saving a list that would lock out the saving admin is refused unless confirmed', () => {
  it('409 ip_lockout, nothing saved; with confirmLockout: true it is saved and the admin is locked out', async () => {
    const { admin } = await partnerWithAdmin();
    expectError(await setPartnerList(admin, [OFFICE], HOME_IP), 409, 'ip_lockout');
    expect((await admin.api.get('/orgs/partners/me', from(HOME_IP))).body.settings.security?.ipAllowlist ?? []).toEqual(
      [],
    );
    expectStatus(await setPartnerList(admin, [OFFICE], HOME_IP, { confirmLockout: true }), 200);
    expectError(await admin.api.get('/orgs/partners/me', from(HOME_IP)), 403, 'ip_not_allowed');
  });

  it('the same on an organisation', async () => {
    const { partner, admin } = await partnerWithAdmin();
    const org = await createOrg(t, partner.id);
    expectError(
      await admin.api.patch(
        `/orgs/organizations/${org.id}`,
        { settings: { security: { ipAllowlist: [OFFICE] } } },
        from(HOME_IP),
      ),
      409,
      'ip_lockout',
    );
    expectStatus(
      await admin.api.patch(
        `/orgs/organizations/${org.id}`,
        { settings: { security: { ipAllowlist: [OFFICE] } } },
        from(OFFICE_IP),
      ),
      200,
    );
  });
});

describe('sign-in and refresh are refused from outside the list', () => {
  it('password sign-in from outside: 403 ip_not_allowed; from inside: signed in; refresh from outside: 403', async () => {
    const { partner, admin } = await partnerWithAdmin();
    const user = await createUser(t, { password: PASSWORD });
    await addPartnerMember(t, { partnerId: partner.id, userId: user.id, roleId: PARTNER_TECH });
    expectStatus(await setPartnerList(admin, [OFFICE], OFFICE_IP), 200);
    expectError(
      await t.client().post('/auth/login', { email: user.email, password: PASSWORD }, from(HOME_IP)),
      403,
      'ip_not_allowed',
    );
    const api = t.client();
    const ok = expectStatus(
      await api.post('/auth/login', { email: user.email, password: PASSWORD }, from(OFFICE_IP)),
      200,
    );
    expect(ok.body.accessToken).toEqual(expect.any(String));
    const csrf = api.cookies.get(CSRF_COOKIE)!;
    expectError(
      await api.post('/auth/refresh', undefined, {
        token: null,
        headers: { 'x-service-csrf': csrf, 'x-forwarded-for': HOME_IP },
      }),
      403,
      'ip_not_allowed',
    );
  });
});

describe("an organisation's list holds its members and partner members acting in it", () => {
  let partnerAdmin: SignedInMember;
  let member: SignedInMember;
  let orgId: string;
  let deviceId: string;
  let tech: SignedInMember;
  beforeAll(async () => {
    const { partner, admin } = await partnerWithAdmin();
    partnerAdmin = admin;
    const org = await createOrg(t, partner.id);
    orgId = org.id;
    deviceId = (await createDevice(t, org, (await createSite(t, org.id)).id)).id;
    member = await signedInOrgMember(t, org, { roleId: ORG_TECH });
    tech = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_TECH });
    expectStatus(
      await admin.api.patch(
        `/orgs/organizations/${org.id}`,
        { settings: { security: { ipAllowlist: [OFFICE] } } },
        from(OFFICE_IP),
      ),
      200,
    );
  });

  it('its own member: every request from outside is 403 ip_not_allowed', async () => {
    expectStatus(await member.api.get(`/devices/${deviceId}`, from(OFFICE_IP)), 200);
    expectError(await member.api.get(`/devices/${deviceId}`, from(HOME_IP)), 403, 'ip_not_allowed');
    expectError(await member.api.get('/users/me', from(HOME_IP)), 403, 'ip_not_allowed');
  });

  it('a partner member acting in it from outside: 403 on its records, and it drops out of lists; the rest of the partner is untouched', async () => {
    expectStatus(await tech.api.get(`/devices/${deviceId}`, from(OFFICE_IP)), 200);
    expectError(await tech.api.get(`/devices/${deviceId}`, from(HOME_IP)), 403, 'ip_not_allowed');
    expectError(await tech.api.get(`/orgs/organizations/${orgId}`, from(HOME_IP)), 403, 'ip_not_allowed');
    const listed = async (api: ApiClient, ip: string) =>
      (
        expectStatus(await api.get('/orgs/organizations', { query: { limit: 200 }, ...from(ip) }), 200).body.data as {
          id: string;
        }[]
      ).map((o) => o.id);
    expect(await listed(tech.api, OFFICE_IP)).toContain(orgId);
    expect(await listed(tech.api, HOME_IP)).not.toContain(orgId);
    expect(
      (await tech.api.get('/devices', { query: { limit: 200 }, ...from(HOME_IP) })).body.data.map(
        (d: { id: string }) => d.id,
      ),
    ).not.toContain(deviceId);
    expectStatus(await tech.api.get('/users/me', from(HOME_IP)), 200);
  });

  it('explain names the ip_allowlist step for the address asked about', async () => {
    const q = { userId: tech.user.id, permission: 'devices:read', resourceType: 'device', resourceId: deviceId };
    const outside = expectStatus(
      await partnerAdmin.api.get('/access/explain', { query: { ...q, ip: HOME_IP }, ...from(OFFICE_IP) }),
      200,
    );
    expect(outside.body).toMatchObject({ allowed: false, deniedBy: 'ip_allowlist' });
    const inside = expectStatus(
      await partnerAdmin.api.get('/access/explain', { query: { ...q, ip: OFFICE_IP }, ...from(OFFICE_IP) }),
      200,
    );
    expect(inside.body.allowed).toBe(true);
  });
});

describe('the break-glass account is exempt from IP allow-lists, and each use is audited', () => {
  it('designated by the partner (a member only), it works from outside; access.break_glass is recorded', async () => {
    const { partner, admin } = await partnerWithAdmin();
    const outsider = await createUser(t);
    expectError(
      await admin.api.patch(
        '/orgs/partners/me',
        { settings: { security: { breakGlassUserId: outsider.id } } },
        from(OFFICE_IP),
      ),
      400,
      'validation_failed',
    );
    const glass = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
    expectStatus(
      await admin.api.patch(
        '/orgs/partners/me',
        { settings: { security: { breakGlassUserId: glass.user.id, ipAllowlist: [OFFICE] } } },
        from(OFFICE_IP),
      ),
      200,
    );
    expectError(await admin.api.get('/users/me', from(HOME_IP)), 403, 'ip_not_allowed');
    expectStatus(await glass.api.get('/users/me', from(HOME_IP)), 200);
    const records = (await auditRecords(t, 'access.break_glass')).filter((r) => r.actorUserId === glass.user.id);
    expect(records.length).toBeGreaterThan(0);
    expect(records[0]!.details).toMatchObject({ exempted: 'ip_allowlist', ip: HOME_IP });
    // An organisation cannot name one.
    const org = await createOrg(t, partner.id);
    expectError(
      await admin.api.patch(
        `/orgs/organizations/${org.id}`,
        { settings: { security: { breakGlassUserId: glass.user.id } } },
        from(OFFICE_IP),
      ),
      400,
      'validation_failed',
    );
  });
});
