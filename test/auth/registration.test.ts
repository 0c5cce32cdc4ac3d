import { randomBytes } from 'node:crypto';
import { count, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizationUsers, partnerUsers, partners, users } from '../../src/db/schema/index.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { auditOf, claimsOf, CSRF_COOKIE, refresh, REFRESH_COOKIE, statuses, strongPassword } from './helpers.js';

let open: TestApp;
let closed: TestApp;

beforeAll(async () => {
  [open, closed] = await Promise.all([
    startApp({
      ENABLE_REGISTRATION: 'true',
      RATE_LIMIT_REGISTER: '1000/3600',
      RATE_LIMIT_REGISTER_PARTNER: '1000/3600',
      RATE_LIMIT_LOGIN: '1000/900',
    }),
    startApp(),
  ]);
});
afterAll(async () => {
  await open?.close();
  await closed?.close();
});

const email = (tag = 'reg') => `${tag}-${randomBytes(4).toString('hex')}@example.test`;
const partnerCount = async (t: TestApp) => (await t.deps.db.select({ n: count() }).from(partners))[0]!.n;

describe('registration routes exist only with ENABLE_REGISTRATION=true', () => {
  it('answers 404 not_found to both routes by default, and writes nothing', async () => {
    const before = await partnerCount(closed);
    const a = await closed.client().post('/auth/register', { email: email(), password: strongPassword(), name: 'Ann' });
    const b = await closed
      .client()
      .post('/auth/register-partner', { companyName: 'Acme', email: email(), password: strongPassword(), name: 'Bo' });
    for (const res of [a, b]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect(await partnerCount(closed)).toBe(before);
    expect((await closed.deps.db.select({ n: count() }).from(users))[0]!.n).toBe(0);
  });
});

describe('register creates a standalone account with no membership', () => {
  it('answers 201 with tokens and cookies; the account has no tenant, so tenant routes answer 403 tenant_context_required', async () => {
    const addr = email();
    const api = open.client();
    const res = await api.post('/auth/register', { email: addr, password: strongPassword(), name: 'Ann Register' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      tokenType: 'Bearer',
      expiresIn: 900,
      mfaEnrollmentRequired: false,
      user: {
        email: addr,
        name: 'Ann Register',
        status: 'active',
        scope: null,
        partnerId: null,
        orgId: null,
        roleId: null,
        permissions: [],
      },
    });
    expect(api.cookies.get(REFRESH_COOKIE)).toBeTruthy();
    expect(api.cookies.get(CSRF_COOKIE)).toBeTruthy();
    expect(claimsOf(res.body.accessToken)).toMatchObject({ scope: null, partnerId: null, orgId: null });

    const authed = api.withToken(res.body.accessToken);
    expect((await authed.me()).status).toBe(200);
    const catalog = await authed.permissionCatalog();
    expect(catalog.status).toBe(403);
    expect(catalog.body.code).toBe('tenant_context_required');

    const [row] = await open.deps.db.select().from(users).where(eq(users.email, addr));
    expect(row!.passwordHash).toMatch(/^\$argon2id\$/);
    expect(await open.deps.db.select().from(partnerUsers).where(eq(partnerUsers.userId, row!.id))).toHaveLength(0);
    expect(
      await open.deps.db.select().from(organizationUsers).where(eq(organizationUsers.userId, row!.id)),
    ).toHaveLength(0);
    // The cookies work like any sign-in's.
    api.token = null;
    expect((await refresh(api)).status).toBe(200);
  });

  it('refuses an email that is taken (any case) with 409, and a weak password with 400 weak_password', async () => {
    const addr = email();
    expect(
      (await open.client().post('/auth/register', { email: addr, password: strongPassword(), name: 'First' })).status,
    ).toBe(201);
    const dup = await open
      .client()
      .post('/auth/register', { email: addr.toUpperCase(), password: strongPassword(), name: 'Second' });
    expect(dup.status).toBe(409);
    const weak = await open.client().post('/auth/register', { email: email(), password: 'password1', name: 'Weak' });
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe('weak_password');
    expect(weak.body.details.feedback).toBeDefined();
    const local = email('lindqvist');
    const containsLocal = await open
      .client()
      .post('/auth/register', { email: local, password: `${local.split('@')[0]}-Quartz!`, name: 'Local' });
    expect(containsLocal.status).toBe(400);
    expect(containsLocal.body.code).toBe('weak_password');
    const short = await open.client().post('/auth/register', { email: email(), password: 'Zx9!vQ2', name: 'Short' });
    expect(short.status).toBe(400);
    expect(short.body.code).toBe('weak_password');
  });
});

describe('register-partner creates partner, membership and user in one transaction', () => {
  it('answers 201 with the partner; the user is its Partner Admin with access to all organisations and must enrol MFA', async () => {
    const addr = email('owner');
    const api = open.client();
    const company = `Acme Managed ${randomBytes(2).toString('hex')}`;
    const res = await api.post('/auth/register-partner', {
      companyName: company,
      email: addr,
      password: strongPassword(),
      name: 'Olive Owner',
    });
    expect(res.status).toBe(201);
    expect(res.body.partner).toEqual({
      id: expect.any(String),
      name: company,
      slug: expect.stringMatching(/^acme-managed-/),
    });
    expect(res.body).toMatchObject({
      tokenType: 'Bearer',
      mfaEnrollmentRequired: true, // Partner Admin has Force MFA
      user: { email: addr, scope: 'partner', partnerId: res.body.partner.id, roleId: PARTNER_ADMIN_ROLE_ID },
    });
    expect(api.cookies.get(REFRESH_COOKIE)).toBeTruthy();
    const [membership] = await open.deps.db
      .select()
      .from(partnerUsers)
      .where(eq(partnerUsers.partnerId, res.body.partner.id));
    expect(membership).toMatchObject({ roleId: PARTNER_ADMIN_ROLE_ID, orgAccess: 'all' });

    // Held at 428 until a factor is enrolled; the own profile stays reachable.
    const authed = api.withToken(res.body.accessToken);
    expect((await authed.me()).status).toBe(200);
    const gated = await authed.permissionCatalog();
    expect(gated.status).toBe(428);
    expect(gated.body.code).toBe('mfa_enrollment_required');

    const [created] = await auditOf(open, 'partner.create', res.body.user.id);
    expect(created).toMatchObject({ partnerId: res.body.partner.id, result: 'success' });
  });

  it('gives two partners with the same company name different slugs', async () => {
    const company = `Same Name ${randomBytes(2).toString('hex')}`;
    const a = await open
      .client()
      .post('/auth/register-partner', { companyName: company, email: email(), password: strongPassword(), name: 'A' });
    const b = await open
      .client()
      .post('/auth/register-partner', { companyName: company, email: email(), password: strongPassword(), name: 'B' });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.partner.slug).not.toBe(b.body.partner.slug);
  });

  it('a duplicate email answers 409 and leaves no partner behind', async () => {
    const addr = email('dup');
    expect(
      (await open.client().post('/auth/register', { email: addr, password: strongPassword(), name: 'Existing' }))
        .status,
    ).toBe(201);
    const before = await partnerCount(open);
    const company = `Orphan Co ${randomBytes(3).toString('hex')}`;
    const res = await open
      .client()
      .post('/auth/register-partner', { companyName: company, email: addr, password: strongPassword(), name: 'Again' });
    expect(res.status).toBe(409);
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(await partnerCount(open)).toBe(before);
    expect(await open.deps.db.select().from(partners).where(eq(partners.name, company))).toHaveLength(0);
  });

  it('two concurrent sign-ups with one email: one 201, one 409, one partner', async () => {
    const addr = email('race');
    const company = `Race Co ${randomBytes(3).toString('hex')}`;
    const results = await Promise.all(
      [1, 2].map((i) =>
        open.client().post('/auth/register-partner', {
          companyName: `${company} ${i}`,
          email: addr,
          password: strongPassword(),
          name: `Racer ${i}`,
        }),
      ),
    );
    expect(statuses(results)).toEqual([201, 409]);
    const made = await open.deps.db
      .select()
      .from(partners)
      .where(sql`${partners.name} like ${`${company}%`}`);
    expect(made).toHaveLength(1);
    expect(await open.deps.db.select().from(users).where(sql`lower(${users.email}) = ${addr}`)).toHaveLength(1);
  });
});
