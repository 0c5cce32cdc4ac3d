// A tenant's security policy is enforced, not only stored: its session and idle lifetimes end sessions (on requests and
// on refresh), Force MFA reaches built-in roles per tenant, and administrators can be held to phishing-resistant MFA.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessions } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { refresh } from '../auth/helpers.js';
import { expectError, member, PASSWORD, PROTECTED_ROUTE, signIn } from '../mfa/helpers.js';
import { createOrg, createPartner, signedInOrgMember, signedInPartnerMember } from '../support/fixtures.js';

const PARTNER_TECHNICIAN = SYSTEM_ROLES[1].id;
const ORG_TECHNICIAN = SYSTEM_ROLES[4].id;
const MINUTE = 60_000;

let t: TestApp;
beforeAll(async () => {
  // Access tokens outlive the policies under test, so each request shows the policy and not the token's own expiry.
  t = await startApp({ ACCESS_TOKEN_TTL: '14400' });
});
afterAll(async () => t?.close());

/** A partner whose admin sets its policy through the API, and a technician of it signed in with a password. */
async function partnerWithTechnician(security: object) {
  const partner = await createPartner(t);
  const admin = await signedInPartnerMember(t, partner.id);
  const set = await admin.api.patch('/orgs/partners/me', { settings: { security } });
  expect(set.status, set.text).toBe(200);
  const tech = await member(t, { kind: 'partner', partnerId: partner.id, roleId: PARTNER_TECHNICIAN });
  return { partner, admin, tech, api: await signIn(t, tech.email) };
}

async function revokeReasonOf(accessToken: string) {
  const sid = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sid as string;
  const [row] = await t.deps.db.select().from(sessions).where(eq(sessions.id, sid));
  return row?.revokeReason ?? null;
}

describe("the tenant's session lifetime ends sessions", () => {
  it('a technician signed in longer than the partner allows is signed out, and cannot refresh back in', async () => {
    const { api } = await partnerWithTechnician({ sessionMaxHours: 1 });
    const token = api.token!;
    expect((await api.get('/auth/me')).status).toBe(200);
    // Activity does not extend it: a request every 20 minutes, then past the hour.
    for (let i = 0; i < 2; i++) {
      t.clock.advance(20 * MINUTE);
      expect((await api.get('/auth/me')).status).toBe(200);
      expect((await refresh(api)).status).toBe(200);
    }
    t.clock.advance(21 * MINUTE);
    expectError(await api.get('/auth/me'), 401, 'unauthenticated');
    expectError(await refresh(api), 401, 'invalid_refresh_token');
    expect(await revokeReasonOf(token)).toBe('session_lifetime');
  });

  it('without a lifetime set, the same session goes on', async () => {
    const { api } = await partnerWithTechnician({ requireMfa: false });
    t.clock.advance(61 * MINUTE);
    expect((await api.get('/auth/me')).status).toBe(200);
    expect((await refresh(api)).status).toBe(200);
  });
});

describe("the tenant's idle lifetime ends idle sessions", () => {
  it('a session left idle past the limit ends; one in use goes on', async () => {
    const { tech } = await partnerWithTechnician({ idleTimeoutMinutes: 30 });
    const busy = await signIn(t, tech.email);
    const idle = await signIn(t, tech.email);
    for (let i = 0; i < 3; i++) {
      t.clock.advance(20 * MINUTE);
      expect((await busy.get('/auth/me')).status).toBe(200);
    }
    expectError(await idle.get('/auth/me'), 401, 'unauthenticated');
    expect(await revokeReasonOf(idle.token!)).toBe('idle_timeout');
    expect((await busy.get('/auth/me')).status).toBe(200);
  });

  it('a refresh after the idle limit is refused (the refresh itself is no activity that revives it)', async () => {
    const { api } = await partnerWithTechnician({ idleTimeoutMinutes: 15 });
    t.clock.advance(10 * MINUTE);
    expect((await refresh(api)).status).toBe(200);
    t.clock.advance(10 * MINUTE);
    expect((await refresh(api)).status).toBe(200);
    t.clock.advance(16 * MINUTE);
    expectError(await refresh(api), 401, 'invalid_refresh_token');
  });

  it("an organisation's stricter idle lifetime holds its members; the partner's holds where the organisation sets none", async () => {
    const partner = await createPartner(t);
    const admin = await signedInPartnerMember(t, partner.id);
    expect(
      (await admin.api.patch('/orgs/partners/me', { settings: { security: { idleTimeoutMinutes: 120 } } })).status,
    ).toBe(200);
    const strict = await createOrg(t, partner.id);
    const loose = await createOrg(t, partner.id);
    const set = await admin.api.patch(`/orgs/organizations/${strict.id}`, {
      settings: { security: { idleTimeoutMinutes: 30 } },
    });
    expect(set.status, set.text).toBe(200);
    const inStrict = await member(t, { partnerId: partner.id, orgId: strict.id, roleId: ORG_TECHNICIAN });
    const inLoose = await member(t, { partnerId: partner.id, orgId: loose.id, roleId: ORG_TECHNICIAN });
    const a = await signIn(t, inStrict.email);
    const b = await signIn(t, inLoose.email);
    t.clock.advance(45 * MINUTE);
    expectError(await a.get('/auth/me'), 401, 'unauthenticated');
    expect((await b.get('/auth/me')).status).toBe(200);
    t.clock.advance(121 * MINUTE);
    expectError(await b.get('/auth/me'), 401, 'unauthenticated');
  });

  it('out-of-range lifetimes are refused with the field named, and nothing is saved', async () => {
    const partner = await createPartner(t);
    const admin = await signedInPartnerMember(t, partner.id);
    for (const security of [{ idleTimeoutMinutes: 1 }, { sessionMaxHours: 0 }, { sessionMaxHours: 721 }]) {
      const res = await admin.api.patch('/orgs/partners/me', { settings: { security } });
      expectError(res, 400, 'validation_failed');
    }
    const now = await admin.api.get('/orgs/partners/me');
    expect(now.body.settings.security ?? {}).toEqual({});
  });
});

describe('Force MFA on a built-in role, per tenant', () => {
  it("the partner forces MFA on Partner Technician: its technician without a factor is held at enrolment; another partner's is not", async () => {
    const { api, tech } = await partnerWithTechnician({ forceMfaRoleIds: [PARTNER_TECHNICIAN] });
    expectError(await api.get(PROTECTED_ROUTE), 428, 'mfa_enrollment_required');
    const login = await t.client().post('/auth/login', { email: tech.email, password: PASSWORD });
    expect(login.body.mfaEnrollmentRequired).toBe(true);

    const other = await member(t, { kind: 'partner', roleId: PARTNER_TECHNICIAN });
    const otherApi = await signIn(t, other.email);
    expect((await otherApi.get(PROTECTED_ROUTE)).status).not.toBe(428);
  });

  it("a partner's list reaches its organisations' members holding that role", async () => {
    const partner = await createPartner(t);
    const admin = await signedInPartnerMember(t, partner.id);
    const set = await admin.api.patch('/orgs/partners/me', {
      settings: { security: { forceMfaRoleIds: [ORG_TECHNICIAN] } },
    });
    expect(set.status, set.text).toBe(200);
    const org = await createOrg(t, partner.id);
    const tech = await signedInOrgMember(t, org, { roleId: ORG_TECHNICIAN, mfaEnabled: false });
    expectError(await tech.api.get(PROTECTED_ROUTE), 428, 'mfa_enrollment_required');
  });
});

describe('a Force MFA list names only roles of the tenant', () => {
  it("an unknown id or another partner's role is 400 validation_failed, and nothing is written", async () => {
    const partner = await createPartner(t);
    const admin = await signedInPartnerMember(t, partner.id);
    const otherPartner = await createPartner(t);
    const otherAdmin = await signedInPartnerMember(t, otherPartner.id);
    const foreign = await otherAdmin.api.post('/roles', {
      name: `Foreign ${Date.now()}`,
      permissions: [{ resource: 'devices', action: 'read' }],
    });
    expect(foreign.status, foreign.text).toBe(201);
    for (const id of ['00000000-0000-4000-8000-0000000000aa', foreign.body.id]) {
      const res = await admin.api.patch('/orgs/partners/me', { settings: { security: { forceMfaRoleIds: [id] } } });
      expectError(res, 400, 'validation_failed');
      expect(JSON.stringify(res.body.details)).toContain('settings.security.forceMfaRoleIds');
    }
    const org = await createOrg(t, partner.id);
    expectError(
      await admin.api.patch(`/orgs/organizations/${org.id}`, {
        settings: { security: { forceMfaRoleIds: [foreign.body.id] } },
      }),
      400,
      'validation_failed',
    );
    const me = await admin.api.get('/orgs/partners/me');
    expect(JSON.stringify(me.body.settings)).not.toContain('forceMfaRoleIds');
    // Built-in roles and the partner's own are accepted.
    const own = await admin.api.post('/roles', {
      name: `Own ${Date.now()}`,
      permissions: [{ resource: 'devices', action: 'read' }],
    });
    const ok = await admin.api.patch('/orgs/partners/me', {
      settings: { security: { forceMfaRoleIds: [PARTNER_TECHNICIAN, own.body.id] } },
    });
    expect(ok.status, ok.text).toBe(200);
  });
});

describe('phishing-resistant MFA for administrators', () => {
  it('a Partner Admin with only an authenticator app is held to enrol a passkey; a technician with one is not', async () => {
    const partner = await createPartner(t);
    const setter = await signedInPartnerMember(t, partner.id);
    const set = await setter.api.patch('/orgs/partners/me', {
      settings: { security: { phishingResistantAdmins: true } },
    });
    expect(set.status, set.text).toBe(200);
    const admin = await signedInPartnerMember(t, partner.id, { mfaEnabled: true });
    const res = await admin.api.get(PROTECTED_ROUTE);
    expectError(res, 428, 'mfa_enrollment_required');
    expect(res.body.allowedMethods).toEqual(['passkey']);
    const tech = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_TECHNICIAN, mfaEnabled: true });
    expect((await tech.api.get(PROTECTED_ROUTE)).status).not.toBe(428);
  });
});
