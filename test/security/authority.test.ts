// Account-wide authority, as an attacker with a tenant of their own acts: an account that belongs to several tenants
// is changed as a whole (status, name, factors, every session) only by an actor whose authority covers every active
// membership of it; anyone else gets 403 account_outside_authority and the account stays as it was, while what
// belongs to the membership alone (removing it, ending a session held in that tenant) still works.
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerUsers, sessions, users } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import {
  addOrgMember,
  addPartnerMember,
  createOrg,
  createSite,
  partnerAdmin,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';

const [PARTNER_ADMIN, PARTNER_TECH, , ORG_ADMIN, , ORG_VIEWER] = SYSTEM_ROLES.map((r) => r.id as string) as [
  string,
  string,
  string,
  string,
  string,
  string,
];

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

const email = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}@example.test`;

const expectOutside = (r: ApiResponse) => {
  expect(r.status, r.text).toBe(403);
  expect(r.body.code).toBe('account_outside_authority');
};

/** What an account-wide action would change: status, name, factors and the live sessions. */
async function accountState(userId: string) {
  const [u] = await t.deps.db.select().from(users).where(eq(users.id, userId));
  const own = await t.deps.db
    .select({ id: sessions.id, revokedAt: sessions.revokedAt })
    .from(sessions)
    .where(eq(sessions.userId, userId));
  return {
    status: u!.status,
    name: u!.name,
    email: u!.email,
    mfaEnabled: u!.mfaEnabled,
    mfaMethod: u!.mfaMethod,
    mfaSecret: u!.mfaSecret,
    passwordHash: u!.passwordHash,
    liveSessions: own
      .filter((s) => s.revokedAt === null)
      .map((s) => s.id)
      .sort(),
  };
}

/** Every account-wide action an administrator can ask for through the API, addressed at one membership. */
const accountWide = (api: ApiClient, userId: string, orgId?: string) => {
  const query = orgId ? { query: { orgId } } : {};
  return {
    'MFA reset': () => api.post(`/users/${userId}/mfa/reset`, undefined, query),
    disable: () => api.patch(`/users/${userId}`, { status: 'disabled' }, query),
    rename: () => api.patch(`/users/${userId}`, { name: 'Renamed by attacker' }, query),
  };
};

async function expectEveryActionRefused(api: ApiClient, userId: string, orgId?: string) {
  const before = await accountState(userId);
  for (const [name, act] of Object.entries(accountWide(api, userId, orgId))) {
    const r = await act();
    expect(r.body.code, `${name}: ${r.text}`).toBe('account_outside_authority');
    expectOutside(r);
  }
  expect(await accountState(userId)).toEqual(before);
}

/** An invitation of an existing account: where the account must accept it first, it accepts (it consented). */
async function inviteAndJoin(
  inviter: ApiClient,
  invitee: ApiClient,
  body: { email: string; name: string; roleId: string },
) {
  const inv = await inviter.raw.request('POST', '/users/invite', { body });
  expect(inv.status, inv.text).toBe(201);
  if (inv.body.status === 'pending') {
    const list = await invitee.raw.request('GET', '/auth/invitations');
    expect(list.status, list.text).toBe(200);
    for (const offer of list.body.data as { id: string }[]) {
      const ok = await invitee.raw.request('POST', `/auth/invitations/${offer.id}/accept`);
      expect(ok.status, ok.text).toBe(200);
    }
  }
  return inv.body.id as string;
}

describe('partner B invites partner A’s admin, then tries to take the account over', () => {
  it('MFA reset, disabling and renaming are refused with account_outside_authority; the account is unchanged', async () => {
    const alice = await partnerAdmin(t);
    const mallory = await partnerAdmin(t);
    const id = await inviteAndJoin(mallory.api, alice.api, {
      email: alice.user.email,
      name: 'Alice',
      roleId: PARTNER_TECH,
    });
    expect(id).toBe(alice.user.id);
    await expectEveryActionRefused(mallory.api, alice.user.id);
    // Alice still works in partner A with her factors and her session.
    expect((await alice.api.get('/users/me')).status).toBe(200);
  });

  it('what belongs to partner B alone still works: removing the membership leaves the account and partner A alone', async () => {
    const alice = await partnerAdmin(t);
    const mallory = await partnerAdmin(t);
    await inviteAndJoin(mallory.api, alice.api, { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
    const before = await accountState(alice.user.id);
    // Alice's session in partner A is not partner B's to end.
    const foreign = await mallory.api.delete(`/users/${alice.user.id}/sessions/${alice.session.sessionId}`);
    expect(foreign.status, foreign.text).toBe(404);
    const removed = await mallory.api.delete(`/users/${alice.user.id}`);
    expect(removed.status, removed.text).toBe(200);
    expect(await accountState(alice.user.id)).toEqual(before);
    expect((await alice.api.get('/users/me')).status).toBe(200);
  });
});

describe('partner B’s admin holding an admin seat in an organisation of partner A', () => {
  it('cannot reset, disable or rename partner A’s admin who also sits in that organisation', async () => {
    const alice = await partnerAdmin(t);
    const orgX = await createOrg(t, alice.partner.id);
    await addOrgMember(t, { orgId: orgX.id, userId: alice.user.id, roleId: ORG_VIEWER });
    // Mallory runs partner B and holds an admin seat in partner A's customer organisation.
    const partnerB = await partnerAdmin(t);
    const mallory = await signedInOrgMember(t, orgX, { roleId: ORG_ADMIN, email: email('mallory') });
    await addPartnerMember(t, { partnerId: partnerB.partner.id, userId: mallory.user.id, roleId: PARTNER_ADMIN });
    await expectEveryActionRefused(mallory.api, alice.user.id);
  });

  it('the MFA reset (the route that checked only the addressed membership) is refused like the others', async () => {
    const alice = await partnerAdmin(t);
    const orgX = await createOrg(t, alice.partner.id);
    await addOrgMember(t, { orgId: orgX.id, userId: alice.user.id, roleId: ORG_VIEWER });
    const mallory = await signedInOrgMember(t, orgX, { roleId: ORG_ADMIN });
    const before = await accountState(alice.user.id);
    expectOutside(await mallory.api.post(`/users/${alice.user.id}/mfa/reset`));
    expect(await accountState(alice.user.id)).toEqual(before);
    expect(before.mfaEnabled).toBe(true);
  });
});

describe('an organisation admin restricted to one site', () => {
  async function siteRestrictedAdmin() {
    const owner = await partnerAdmin(t);
    const org = await createOrg(t, owner.partner.id);
    const [s1, s2] = [await createSite(t, org.id), await createSite(t, org.id)];
    const admin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN, siteIds: [s1.id] });
    return { org, s1, s2, admin };
  }

  it('cannot act on an organisation-wide member (a wider reach than its own)', async () => {
    const { org, admin } = await siteRestrictedAdmin();
    const wide = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    await expectEveryActionRefused(admin.api, wide.user.id);
  });

  it('cannot act on a member of its site who also holds another site', async () => {
    const { org, s1, s2, admin } = await siteRestrictedAdmin();
    const both = await signedInOrgMember(t, org, { roleId: ORG_VIEWER, siteIds: [s1.id, s2.id] });
    await expectEveryActionRefused(admin.api, both.user.id);
  });

  it('may rename and disable a member of its own site only', async () => {
    const { org, s1, admin } = await siteRestrictedAdmin();
    const inside = await signedInOrgMember(t, org, { roleId: ORG_VIEWER, siteIds: [s1.id] });
    expect((await admin.api.patch(`/users/${inside.user.id}`, { name: 'Site One' })).status).toBe(200);
    expect((await admin.api.patch(`/users/${inside.user.id}`, { status: 'disabled' })).status).toBe(200);
  });
});

describe('partner staff and the organisations they reach', () => {
  it('cannot change an account that also sits in an organisation that suspended its partner’s access', async () => {
    const owner = await partnerAdmin(t);
    const vetoed = await createOrg(t, owner.partner.id, undefined, { mspAccess: 'suspended' });
    const tech = await signedInPartnerMember(t, owner.partner.id, { roleId: PARTNER_TECH });
    await addOrgMember(t, { orgId: vetoed.id, userId: tech.user.id, roleId: ORG_ADMIN });
    // Addressed through its partner membership, the account still holds a seat the partner may not touch.
    await expectEveryActionRefused(owner.api, tech.user.id);
  });

  it('a partner admin reaching every organisation covers a technician in the partner and in its organisations', async () => {
    const owner = await partnerAdmin(t);
    const x = await createOrg(t, owner.partner.id);
    const tech = await signedInPartnerMember(t, owner.partner.id, { roleId: PARTNER_TECH, email: email('tech') });
    await addOrgMember(t, { orgId: x.id, userId: tech.user.id, roleId: ORG_VIEWER });
    const r = await owner.api.patch(`/users/${tech.user.id}`, { status: 'disabled' });
    expect(r.status, r.text).toBe(200);
    expect((await tech.api.get('/users/me')).status).toBe(401);
  });
});

describe('a pending offer gives the offering tenant no authority', () => {
  it('a membership that is not active is not counted as the inviter’s: the account elsewhere stays out of reach', async () => {
    const alice = await partnerAdmin(t);
    const mallory = await partnerAdmin(t);
    await addPartnerMember(t, { partnerId: mallory.partner.id, userId: alice.user.id, roleId: PARTNER_TECH });
    await t.deps.db
      .update(partnerUsers)
      .set({ status: 'pending', invitedAt: new Date() })
      .where(and(eq(partnerUsers.userId, alice.user.id), eq(partnerUsers.partnerId, mallory.partner.id)));
    const before = await accountState(alice.user.id);
    for (const act of Object.values(accountWide(mallory.api, alice.user.id))) {
      const r = await act();
      expect([403, 404], r.text).toContain(r.status);
      if (r.status === 403) expect(r.body.code).toBe('account_outside_authority');
    }
    expect(await accountState(alice.user.id)).toEqual(before);
  });
});
