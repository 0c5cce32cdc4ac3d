import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizationUsers, users } from '../../src/db/schema/index.js';
import { createInviteToken } from '../../src/modules/auth/invites.js';
import { ORG_ADMIN_ROLE_ID, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { addOrgMember, addPartnerMember, createOrg, createPartner, createUser } from '../support/fixtures.js';
import { auditOf, claimsOf, CSRF_COOKIE, refresh, REFRESH_COOKIE, statuses, strongPassword } from './helpers.js';

let t: TestApp;
const DAY = 24 * 3600 * 1000;
const PARTNER_TECH = SYSTEM_ROLES[1].id;

beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_LOGIN: '1000/900' });
});
afterAll(async () => t?.close());

/** An invited user with an organisation membership and a live invitation link, as POST /users/invite leaves them. */
async function invitedToOrg(opts: { name?: string } = {}) {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const user = await createUser(t, { status: 'invited', name: opts.name ?? 'Ivy Invited' });
  await addOrgMember(t, { orgId: org.id, userId: user.id, roleId: ORG_ADMIN_ROLE_ID });
  const ctx = { scope: 'organization' as const, partnerId: partner.id, orgId: org.id, roleId: ORG_ADMIN_ROLE_ID };
  const token = await t.deps.db.transaction((tx) => createInviteToken(tx, t.clock.now(), user.id, ctx, null));
  return { partner, org, user, token, ctx };
}

async function invitedToPartner() {
  const partner = await createPartner(t);
  const user = await createUser(t, { status: 'invited' });
  await addPartnerMember(t, { partnerId: partner.id, userId: user.id, roleId: PARTNER_TECH, orgAccess: 'all' });
  const ctx = { scope: 'partner' as const, partnerId: partner.id, orgId: null, roleId: PARTNER_TECH };
  const token = await t.deps.db.transaction((tx) => createInviteToken(tx, t.clock.now(), user.id, ctx, null));
  return { partner, user, token };
}

describe('invite/preview tells who an invitation is for, without using it up', () => {
  it('answers email, name and the tenant names, twice', async () => {
    const { user, org, partner, token } = await invitedToOrg();
    for (let i = 0; i < 2; i++) {
      const res = await t.client().post('/auth/invite/preview', { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ email: user.email, name: user.name, orgName: org.name, partnerName: partner.name });
    }
  });

  it('answers 404 invite_invalid to a token that was never issued', async () => {
    const res = await t.client().post('/auth/invite/preview', { token: 'n'.repeat(43) });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('invite_invalid');
  });
});

describe('accepting an invitation activates the user and signs them in', () => {
  it('answers tokens and cookies in the invited membership; the user is active and can sign in with the new password', async () => {
    const { user, org, partner, token } = await invitedToOrg();
    const password = strongPassword();
    const api = t.client();
    const res = await api.post('/auth/accept-invite', { token, password, name: 'Ivy Accepted' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      tokenType: 'Bearer',
      user: {
        id: user.id,
        name: 'Ivy Accepted',
        status: 'active',
        scope: 'organization',
        orgId: org.id,
        roleId: ORG_ADMIN_ROLE_ID,
      },
    });
    expect(api.cookies.get(REFRESH_COOKIE)).toBeTruthy();
    expect(api.cookies.get(CSRF_COOKIE)).toBeTruthy();
    expect(claimsOf(res.body.accessToken)).toMatchObject({ sub: user.id, orgId: org.id, partnerId: partner.id });
    expect((await api.withToken(res.body.accessToken).me()).status).toBe(200);
    expect((await refresh(api)).status).toBe(200);

    const [row] = await t.deps.db.select().from(users).where(eq(users.id, user.id));
    expect(row).toMatchObject({ status: 'active', name: 'Ivy Accepted' });
    expect(row!.passwordHash).toMatch(/^\$argon2id\$/);
    expect((await t.client().post('/auth/login', { email: user.email, password })).status).toBe(200);

    const [accepted] = await auditOf(t, 'user.invite.accept', user.id);
    expect(accepted).toMatchObject({ result: 'success', actorEmail: user.email, orgId: org.id, partnerId: partner.id });
    const logins = await auditOf(t, 'user.login', user.id);
    expect(logins.find((e) => (e.details as { method?: string }).method === 'invite')).toMatchObject({ orgId: org.id });
  });

  it('a partner invitation signs in to the partner membership', async () => {
    const { user, partner, token } = await invitedToPartner();
    const res = await t.client().post('/auth/accept-invite', { token, password: strongPassword() });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: user.id, scope: 'partner', partnerId: partner.id, roleId: PARTNER_TECH });
  });
});

describe('an invitation link is single-use and lives seven days', () => {
  it('refuses the link after it was accepted, for preview and accept alike', async () => {
    const { token } = await invitedToOrg();
    expect((await t.client().post('/auth/accept-invite', { token, password: strongPassword() })).status).toBe(200);
    const again = await t.client().post('/auth/accept-invite', { token, password: strongPassword() });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('invite_invalid');
    expect((await t.client().post('/auth/invite/preview', { token })).status).toBe(404);
  });

  it('refuses an expired link with 404 invite_invalid', async () => {
    const { token, user } = await invitedToOrg();
    t.clock.advance(7 * DAY + 60_000);
    try {
      const preview = await t.client().post('/auth/invite/preview', { token });
      expect(preview.status).toBe(404);
      expect(preview.body.code).toBe('invite_invalid');
      const accept = await t.client().post('/auth/accept-invite', { token, password: strongPassword() });
      expect(accept.status).toBe(404);
      expect(accept.body.code).toBe('invite_invalid');
    } finally {
      t.clock.advance(-(7 * DAY + 60_000));
    }
    const [row] = await t.deps.db.select().from(users).where(eq(users.id, user.id));
    expect(row!.status).toBe('invited');
  });

  it('a resent invitation replaces the earlier link', async () => {
    const { token: first, user, ctx } = await invitedToOrg();
    const second = await t.deps.db.transaction((tx) => createInviteToken(tx, t.clock.now(), user.id, ctx, null));
    expect((await t.client().post('/auth/accept-invite', { token: first, password: strongPassword() })).status).toBe(
      404,
    );
    expect((await t.client().post('/auth/accept-invite', { token: second, password: strongPassword() })).status).toBe(
      200,
    );
  });

  it('refuses the link once the membership it grants was withdrawn', async () => {
    const { token, user, org } = await invitedToOrg();
    await t.deps.db
      .delete(organizationUsers)
      .where(and(eq(organizationUsers.userId, user.id), eq(organizationUsers.orgId, org.id)));
    const res = await t.client().post('/auth/accept-invite', { token, password: strongPassword() });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('invite_invalid');
  });

  it('a weak password answers 400 weak_password and leaves the link usable', async () => {
    const { token } = await invitedToOrg();
    const weak = await t.client().post('/auth/accept-invite', { token, password: 'password1' });
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe('weak_password');
    expect(weak.body.details.feedback).toBeDefined();
    expect((await t.client().post('/auth/accept-invite', { token, password: strongPassword() })).status).toBe(200);
  });
});

describe('two concurrent accepts of one invitation: exactly one succeeds', () => {
  it("one 200 and one 404, one session, and the winner's password is the one set", async () => {
    const { token, user } = await invitedToOrg();
    const passwords = [strongPassword(), strongPassword()];
    const results = await Promise.all(
      passwords.map((password) => t.client().post('/auth/accept-invite', { token, password })),
    );
    expect(statuses(results)).toEqual([200, 404]);
    const winner = passwords[results.findIndex((r) => r.status === 200)]!;
    const loser = passwords[results.findIndex((r) => r.status === 404)]!;
    expect((await t.client().post('/auth/login', { email: user.email, password: winner })).status).toBe(200);
    expect((await t.client().post('/auth/login', { email: user.email, password: loser })).status).toBe(401);
    expect(await auditOf(t, 'user.invite.accept', user.id)).toHaveLength(1);
  });
});
