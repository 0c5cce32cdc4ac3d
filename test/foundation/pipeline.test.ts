import { and, eq } from 'drizzle-orm';
import { SignJWT, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  organizationUsers,
  organizations,
  partners,
  rolePermissions,
  roles,
  sessions,
  users,
  permissions,
} from '../../src/db/schema/index.js';
import { ORG_ADMIN_ROLE_ID, PARTNER_ADMIN_ROLE_ID, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { bumpAuthzEpoch } from '../../src/modules/roles/repo.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  addOrgMember,
  addPartnerMember,
  createOrg,
  createPartner,
  createUser,
  partnerAdmin,
  sessionFor,
} from '../support/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

const ORG_VIEWER = SYSTEM_ROLES[5].id;

async function orgUser(
  opts: { roleId?: string; mfaEnabled?: boolean; orgSettings?: object; partnerSettings?: object } = {},
) {
  const partner = await createPartner(t);
  if (opts.partnerSettings)
    await t.deps.db.update(partners).set({ settings: opts.partnerSettings }).where(eq(partners.id, partner.id));
  const org = await createOrg(t, partner.id, undefined, opts.orgSettings ?? {});
  const user = await createUser(t, { mfaEnabled: opts.mfaEnabled });
  const roleId = opts.roleId ?? ORG_ADMIN_ROLE_ID;
  await addOrgMember(t, { orgId: org.id, userId: user.id, roleId });
  const s = await sessionFor(t, user.id, { scope: 'organization', orgId: org.id, roleId });
  return { partner, org, user, session: s, api: t.client().withToken(s.accessToken) };
}

describe('an access token is checked on every request', () => {
  it('refuses a request without a bearer token with 401 unauthenticated', async () => {
    const res = await t.client().me();
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'unauthenticated', error: expect.any(String), message: expect.any(String) });
  });

  it('refuses a malformed token and a token signed by another key', async () => {
    const { user, session } = await orgUser();
    expect((await t.client().withToken('not.a.jwt').me()).status).toBe(401);
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const forged = await new SignJWT({ sid: session.sessionId, mfa: true })
      .setProtectedHeader({ alg: 'EdDSA', kid: t.deps.keys.jwks().keys[0]!.kid!, typ: 'at+jwt' })
      .setSubject(user.id)
      .setIssuer(t.deps.config.publicUrl)
      .setAudience('gatehouse-api')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
    expect((await t.client().withToken(forged).me()).body.code).toBe('unauthenticated');
  });

  it('refuses an HS256 token made with the public key as secret (algorithm confusion)', async () => {
    const { user, session } = await orgUser();
    const jwk = t.deps.keys.jwks().keys[0]!;
    const forged = await new SignJWT({ sid: session.sessionId })
      .setProtectedHeader({ alg: 'HS256', kid: jwk.kid!, typ: 'at+jwt' })
      .setSubject(user.id)
      .setIssuer(t.deps.config.publicUrl)
      .setAudience('gatehouse-api')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(jwk.x!));
    expect((await t.client().withToken(forged).me()).status).toBe(401);
  });

  it('refuses an expired token', async () => {
    const { api } = await orgUser();
    expect((await api.me()).status).toBe(200);
    t.clock.advance((t.deps.config.accessTokenTtl + 1) * 1000);
    try {
      expect((await api.me()).body.code).toBe('unauthenticated');
    } finally {
      t.clock.advance(-(t.deps.config.accessTokenTtl + 1) * 1000);
    }
  });

  it('publishes the verification key at /api/v1/.well-known/jwks.json', async () => {
    const res = await t.client().get('/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.body.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', kid: expect.any(String) });
    expect(res.body.keys[0]).not.toHaveProperty('d');
  });
});

describe('a token dies with its session, user or membership on the next request', () => {
  it('revoked session → 401', async () => {
    const { api, session } = await orgUser();
    expect((await api.me()).status).toBe(200);
    await t.deps.db.update(sessions).set({ revokedAt: new Date() }).where(eq(sessions.id, session.sessionId));
    expect((await api.me()).status).toBe(401);
  });

  it('disabled user → 401', async () => {
    const { api, user } = await orgUser();
    await t.deps.db.update(users).set({ status: 'disabled' }).where(eq(users.id, user.id));
    expect((await api.me()).status).toBe(401);
  });

  it('removed membership → 401', async () => {
    const { api, user, org } = await orgUser();
    await t.deps.db.delete(organizationUsers).where(eq(organizationUsers.userId, user.id));
    expect((await api.me()).status).toBe(401);
    expect(org.id).toBeTruthy();
  });
});

describe('tenant context and permissions', () => {
  it('a user with no partner or organisation association gets 403 tenant_context_required', async () => {
    const user = await createUser(t);
    const s = await sessionFor(t, user.id, { scope: null });
    const api = t.client().withToken(s.accessToken);
    expect((await api.me()).status).toBe(200);
    const res = await api.permissionCatalog();
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      code: 'tenant_context_required',
      message: 'Partner or organization context required.',
    });
  });

  it('a role without users:read gets 403 forbidden; an admin gets the catalogue', async () => {
    const viewer = await orgUser({ roleId: ORG_VIEWER });
    expect((await viewer.api.permissionCatalog()).body.code).toBe('forbidden');
    const admin = await orgUser();
    const res = await admin.api.permissionCatalog();
    expect(res.status).toBe(200);
    expect(res.body.aliases).toEqual({ view: 'read', create: 'write', update: 'write' });
    expect(res.body.permissions).toContainEqual(expect.objectContaining({ resource: 'users', action: 'read' }));
    expect(res.body.permissions.some((p) => p.resource === '*')).toBe(false);
  });

  it('permissions are inherited through the parent chain, and a change is seen on the next request', async () => {
    const { partner, org, user, api } = await orgUser({ roleId: ORG_VIEWER });
    // grandparent grants users:read; child and parent grant nothing of it
    const [grand] = await t.deps.db
      .insert(roles)
      .values({ scope: 'organization', appliesTo: 'organization', orgId: org.id, partnerId: partner.id, name: 'grand' })
      .returning();
    const [parent] = await t.deps.db
      .insert(roles)
      .values({
        scope: 'organization',
        appliesTo: 'organization',
        orgId: org.id,
        name: 'parent',
        parentRoleId: grand!.id,
      })
      .returning();
    const [child] = await t.deps.db
      .insert(roles)
      .values({
        scope: 'organization',
        appliesTo: 'organization',
        orgId: org.id,
        name: 'child',
        parentRoleId: parent!.id,
      })
      .returning();
    const [usersRead] = await t.deps.db
      .select()
      .from(permissions)
      .where(and(eq(permissions.resource, 'users'), eq(permissions.action, 'read')));
    await t.deps.db.update(organizationUsers).set({ roleId: child!.id }).where(eq(organizationUsers.userId, user.id));
    expect((await api.permissionCatalog()).status).toBe(403);
    await t.deps.db.transaction(async (tx) => {
      await tx.insert(rolePermissions).values({ roleId: grand!.id, permissionId: usersRead!.id });
      await bumpAuthzEpoch(tx);
    });
    expect(usersRead!.action).toBe('read');
    expect((await api.permissionCatalog()).status).toBe(200);
    expect((await api.me()).body.permissions).toContain('users:read');
  });
});

describe('Force MFA holds the account at 428 until a factor is enrolled', () => {
  it('a Partner Admin without MFA gets 428 with enrollUrl and allowedMethods, but may read its own profile', async () => {
    const partner = await createPartner(t);
    const user = await createUser(t, { mfaEnabled: false });
    await addPartnerMember(t, { partnerId: partner.id, userId: user.id, roleId: PARTNER_ADMIN_ROLE_ID });
    const s = await sessionFor(t, user.id, { scope: 'partner', partnerId: partner.id, roleId: PARTNER_ADMIN_ROLE_ID });
    const api = t.client().withToken(s.accessToken);
    const res = await api.permissionCatalog();
    expect(res.status).toBe(428);
    expect(res.body).toMatchObject({
      code: 'mfa_enrollment_required',
      enrollUrl: expect.any(String),
      allowedMethods: ['totp', 'sms', 'passkey'],
    });
    expect((await api.me()).status).toBe(200);
    expect((await api.usersMe()).status).toBe(200);
  });

  it("an organisation's requireMfa holds its users and offers only the allowed methods", async () => {
    const { api } = await orgUser({
      orgSettings: { security: { requireMfa: true, allowedMfaMethods: { sms: false } } },
    });
    const res = await api.permissionCatalog();
    expect(res.status).toBe(428);
    expect(res.body.allowedMethods).toEqual(['totp', 'passkey']);
  });

  it("the partner's requireMfa applies to every organisation of the partner (strictest wins)", async () => {
    const { api } = await orgUser({
      partnerSettings: { security: { requireMfa: true } },
      orgSettings: { security: { requireMfa: false } },
    });
    expect((await api.permissionCatalog()).status).toBe(428);
  });

  it('an enrolled user passes', async () => {
    const { api } = await orgUser({ mfaEnabled: true, orgSettings: { security: { requireMfa: true } } });
    expect((await api.permissionCatalog()).status).toBe(200);
  });

  it('401 comes before 428: a dead session is unauthenticated even under Force MFA', async () => {
    const { api, session } = await orgUser({ orgSettings: { security: { requireMfa: true } } });
    await t.deps.db.update(sessions).set({ revokedAt: new Date() }).where(eq(sessions.id, session.sessionId));
    expect((await api.permissionCatalog()).status).toBe(401);
  });
});

describe('own profile', () => {
  it('GET /users/me and /auth/me return the profile with permissions and never a secret field', async () => {
    const { api, user } = await partnerAdmin(t);
    await t.deps.db
      .update(users)
      .set({
        mfaSecret: 'SEALED-SECRET',
        passwordHash: '$argon2id$fake',
        phoneNumber: '+14155550123',
        phoneVerified: true,
        mfaRecoveryCodes: ['h1'],
      })
      .where(eq(users.id, user.id));
    for (const res of [await api.me(), await api.usersMe()]) {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: user.id,
        email: user.email,
        scope: 'partner',
        phoneLast4: '0123',
        phoneVerified: true,
        permissions: ['*:*'],
      });
      expect(res.text).not.toMatch(/SEALED-SECRET|argon2|h1"|14155550123/);
      expect(Object.keys(res.body)).not.toEqual(
        expect.arrayContaining(['passwordHash', 'mfaSecret', 'mfaRecoveryCodes', 'phoneNumber']),
      );
    }
  });

  it('PATCH /users/me updates name and avatar and writes user.profile.update in the same transaction', async () => {
    const { api, user, partner } = await partnerAdmin(t);
    const res = await api.patch('/users/me', { name: '  Ada Lovelace ', avatarUrl: 'https://cdn.example.test/a.png' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Ada Lovelace', avatarUrl: 'https://cdn.example.test/a.png' });
    const rows = await t.deps.db.query.auditLogs.findMany({ where: (a, { eq: e }) => e(a.actorUserId, user.id) });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: 'user.profile.update',
      result: 'success',
      partnerId: partner.id,
      resourceId: user.id,
      ip: '127.0.0.1',
    });
  });

  it('PATCH /users/me refuses unknown fields, javascript: avatars and empty bodies without writing', async () => {
    const { api, user } = await partnerAdmin(t);
    for (const body of [
      { name: 'x', isAdmin: true },
      { avatarUrl: 'javascript:alert(1)' },
      {},
      { name: '' },
      { name: 'x'.repeat(256) },
    ]) {
      const res = await api.patch('/users/me', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
    const [row] = await t.deps.db.select().from(users).where(eq(users.id, user.id));
    expect(row!.name).toBe(user.name);
    expect(row!.avatarUrl).toBeNull();
  });
});

it('organisations table cascade sanity: partner with organisations cannot be deleted', async () => {
  const partner = await createPartner(t);
  await createOrg(t, partner.id);
  await expect(t.deps.db.delete(partners).where(eq(partners.id, partner.id))).rejects.toThrow();
  expect((await t.deps.db.select().from(organizations).where(eq(organizations.partnerId, partner.id))).length).toBe(1);
});
