// Property: every audited event is recorded when its HTTP trigger runs, with the actor, the tenant of the membership it
// happened in, the result, the resource, the client IP and user agent; and no record holds a password, token, TOTP
// secret or code the walk used. Found through GET /audit-logs.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs } from '../../src/db/schema/index.js';
import { totpFor } from '../../src/modules/mfa/codes.js';
import type { AuditRecordJson } from '../../src/modules/audit/schemas.js';
import { ORG_ADMIN_ROLE_ID, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { ApiClient, type RawRequestOptions } from '../support/client.js';
import {
  addOrgMember,
  createOrg,
  createPartner,
  createUser,
  sessionFor,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { createCredential } from '../support/webauthn.js';
import { listAll, waitForRecord } from './helpers.js';

const AUDITED_ACTIONS = [
  'user.invite',
  'user.invite.resend',
  'user.update',
  'user.remove',
  'user.role.assign',
  'user.profile.update',
  'user.login',
  'user.logout',
  'user.mfa_reset',
  'role.create',
  'role.update',
  'role.delete',
  'role.clone',
  'auth.mfa.setup',
  'auth.mfa.disable',
  'auth.mfa.recovery_codes.rotate',
  'auth.mfa.passkey.register',
  'auth.mfa.passkey.delete',
  'sso.provider.create',
  'sso.provider.update',
  'sso.provider.delete',
];
// Failed and credential-changing sign-in events, audited as well.
const EXTRA_AUDITED_ACTIONS = [
  'auth.login.failed',
  'auth.refresh.reuse_detected',
  'user.invite.accept',
  'auth.password.reset',
  'auth.password.change',
];
const ORG_TECH = SYSTEM_ROLES[4]!.id as string;
const ORG_VIEWER = SYSTEM_ROLES[5]!.id as string;

const UA = 'gatehouse-audit-walk/1.0';
const strongPassword = () => `Glacier-${randomBytes(5).toString('hex')}-Saffron!`;

/** The console's client, with a user agent of its own on every request (to find it in the records). */
class WalkClient extends ApiClient {
  protected override send(method: string, path: string, opts: RawRequestOptions = {}) {
    return super.send(method, path, { ...opts, headers: { 'user-agent': UA, ...opts.headers } });
  }
}

let t: TestApp;
let mail: MailCatcher;
let partnerId: string;
let orgId: string;
let admin: SignedInMember;
let adminApi: WalkClient;
/** Every credential the walk handles; none may appear in any record. */
const secrets = new Set<string>();
/** Six-digit codes: searched as whole numbers, so a uuid's hex digits cannot match by chance. */
const codes = new Set<string>();
const walked = new Map<string, AuditRecordJson>();

interface Expect {
  actorUserId: string;
  partnerId: string | null;
  orgId: string | null;
  result?: 'success' | 'failure' | 'denied';
  resourceType?: string;
  resourceId?: string;
}

/** The one record of `action` by the actor (about the resource), as the partner's auditor reads it. */
async function expectRecord(action: string, e: Expect) {
  const query = { action, actorUserId: e.actorUserId, ...(e.resourceId ? { resourceId: e.resourceId } : {}) };
  const rows = await listAll(adminApi, query);
  expect(rows, `${action}: ${JSON.stringify(query)}`).toHaveLength(1);
  const r = rows[0]!;
  expect(r, action).toMatchObject({
    action,
    result: e.result ?? 'success',
    actorUserId: e.actorUserId,
    partnerId: e.partnerId,
    orgId: e.orgId,
    ip: '127.0.0.1',
    userAgent: UA,
    ...(e.resourceType ? { resourceType: e.resourceType } : {}),
    ...(e.resourceId ? { resourceId: e.resourceId } : {}),
  });
  expect(r.actorEmail, action).toEqual(expect.any(String));
  expect(Date.parse(r.at)).not.toBeNaN();
  walked.set(action, r);
  return r;
}

const ok = (res: { status: number; text: string }, status = 200) => expect(res.status, res.text).toBe(status);
const totp = (secret: string) => {
  t.clock.advance(30_000); // a fresh time step: the service refuses a code twice
  const code = totpFor(secret).generate({ timestamp: t.clock.now().getTime() });
  codes.add(code);
  return code;
};
const keepTokens = (body: { accessToken?: string }, api: ApiClient) => {
  if (body.accessToken) {
    api.token = body.accessToken;
    secrets.add(body.accessToken);
  }
  for (const v of api.cookies.values()) secrets.add(v);
};

beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url, SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  partnerId = (await createPartner(t)).id;
  orgId = (await createOrg(t, partnerId)).id;
  admin = await signedInPartnerMember(t, partnerId);
  adminApi = new WalkClient(t.baseUrl);
  adminApi.token = admin.session.accessToken;
  secrets.add(admin.session.accessToken).add(admin.session.refreshToken);
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

describe("an administrator's actions on an organisation carry the partner and that organisation", () => {
  let invitedId: string;
  const invitedEmail = `walk-invitee-${randomBytes(4).toString('hex')}@example.test`;
  const q = () => ({ query: { orgId } });

  it('user.invite, user.invite.resend', async () => {
    const inv = await adminApi.post('/users/invite', {
      email: invitedEmail,
      name: 'Walk Invitee',
      roleId: ORG_VIEWER,
      orgId,
    });
    ok(inv, 201);
    invitedId = inv.body.id;
    await expectRecord('user.invite', {
      actorUserId: admin.user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: invitedId,
    });
    await mail.waitFor(invitedEmail);
    ok(await adminApi.post('/users/resend-invite', { userId: invitedId, orgId }));
    await expectRecord('user.invite.resend', {
      actorUserId: admin.user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: invitedId,
    });
  });

  it('user.invite.accept: the invitee is the actor, in the organisation it joined', async () => {
    const m = await mail.waitFor(
      invitedEmail,
      (x) => mail.messages.filter((y) => y.to.includes(invitedEmail)).indexOf(x) === 1,
    );
    const token = linkToken(m);
    const password = strongPassword();
    secrets.add(token).add(password);
    const invitee = new WalkClient(t.baseUrl);
    const res = await invitee.post('/auth/accept-invite', { token, password });
    ok(res);
    keepTokens(res.body, invitee);
    await expectRecord('user.invite.accept', {
      actorUserId: invitedId,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: invitedId,
    });
  });

  it('user.update, user.role.assign, user.mfa_reset, user.remove', async () => {
    ok(await adminApi.patch(`/users/${invitedId}`, { name: 'Walk Renamed' }, q()));
    await expectRecord('user.update', {
      actorUserId: admin.user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: invitedId,
    });
    ok(await adminApi.post(`/users/${invitedId}/role`, { roleId: ORG_TECH }, q()));
    await expectRecord('user.role.assign', {
      actorUserId: admin.user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: invitedId,
    });
    ok(await adminApi.post(`/users/${invitedId}/mfa/reset`, undefined, q()));
    await expectRecord('user.mfa_reset', {
      actorUserId: admin.user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: invitedId,
    });
    ok(await adminApi.delete(`/users/${invitedId}`, q()));
    await expectRecord('user.remove', {
      actorUserId: admin.user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: invitedId,
    });
  });

  it('sso.provider.create, sso.provider.update, sso.provider.delete (the client secret is not recorded)', async () => {
    const clientSecret = `sso-secret-${randomBytes(12).toString('hex')}`;
    secrets.add(clientSecret);
    const created = await adminApi.post('/sso/providers', {
      name: 'Walk IdP',
      issuer: 'http://127.0.0.1:9/walk',
      clientId: 'walk-client',
      clientSecret,
      orgId,
    });
    ok(created, 201);
    const id = created.body.id as string;
    await expectRecord('sso.provider.create', {
      actorUserId: admin.user.id,
      partnerId,
      orgId,
      resourceType: 'sso_provider',
      resourceId: id,
    });
    const newSecret = `sso-secret-${randomBytes(12).toString('hex')}`;
    secrets.add(newSecret);
    ok(await adminApi.patch(`/sso/providers/${id}`, { name: 'Walk IdP 2', clientSecret: newSecret }, q()));
    await expectRecord('sso.provider.update', {
      actorUserId: admin.user.id,
      partnerId,
      orgId,
      resourceType: 'sso_provider',
      resourceId: id,
    });
    ok(await adminApi.delete(`/sso/providers/${id}`, q()));
    await expectRecord('sso.provider.delete', {
      actorUserId: admin.user.id,
      partnerId,
      orgId,
      resourceType: 'sso_provider',
      resourceId: id,
    });
  });
});

describe("an administrator's actions on the partner itself carry the partner and no organisation", () => {
  it('role.create, role.update, role.clone, role.delete', async () => {
    const role = await adminApi.post('/roles', {
      name: `Walk role ${randomBytes(3).toString('hex')}`,
      permissions: [{ resource: 'devices', action: 'read' }],
    });
    ok(role, 201);
    await expectRecord('role.create', {
      actorUserId: admin.user.id,
      partnerId,
      orgId: null,
      resourceType: 'role',
      resourceId: role.body.id,
    });
    ok(await adminApi.patch(`/roles/${role.body.id}`, { description: 'walked' }));
    await expectRecord('role.update', {
      actorUserId: admin.user.id,
      partnerId,
      orgId: null,
      resourceType: 'role',
      resourceId: role.body.id,
    });
    const clone = await adminApi.post(`/roles/${role.body.id}/clone`, {
      name: `Walk clone ${randomBytes(3).toString('hex')}`,
    });
    ok(clone, 201);
    await expectRecord('role.clone', {
      actorUserId: admin.user.id,
      partnerId,
      orgId: null,
      resourceType: 'role',
      resourceId: clone.body.id,
    });
    ok(await adminApi.delete(`/roles/${clone.body.id}`));
    await expectRecord('role.delete', {
      actorUserId: admin.user.id,
      partnerId,
      orgId: null,
      resourceType: 'role',
      resourceId: clone.body.id,
    });
  });
});

describe("an organisation member's own sign-in, MFA and password events carry its membership's tenant", () => {
  let user: { id: string; email: string };
  let password = strongPassword();
  let api: WalkClient;
  let totpSecret = '';

  beforeAll(async () => {
    secrets.add(password);
    const u = await createUser(t, { password, email: `walk-member-${randomBytes(4).toString('hex')}@example.test` });
    await addOrgMember(t, { orgId, userId: u.id, roleId: ORG_ADMIN_ROLE_ID });
    user = { id: u.id, email: u.email };
    api = new WalkClient(t.baseUrl);
  });

  it('auth.login.failed (result failure, tenant of the default membership), then user.login', async () => {
    const wrong = `wrong-${randomBytes(6).toString('hex')}`;
    secrets.add(wrong);
    expect((await api.post('/auth/login', { email: user.email, password: wrong })).status).toBe(401);
    await expectRecord('auth.login.failed', {
      actorUserId: user.id,
      partnerId,
      orgId,
      result: 'failure',
      resourceType: 'user',
      resourceId: user.id,
    });
    const res = await api.post('/auth/login', { email: user.email, password });
    ok(res);
    keepTokens(res.body, api);
    await expectRecord('user.login', { actorUserId: user.id, partnerId, orgId, resourceType: 'session' });
  });

  it('user.profile.update', async () => {
    ok(await api.patch('/users/me', { name: 'Walk Member' }));
    await expectRecord('user.profile.update', {
      actorUserId: user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: user.id,
    });
  });

  it('auth.mfa.setup, auth.mfa.recovery_codes.rotate', async () => {
    const setup = await api.post('/auth/mfa/setup');
    ok(setup);
    totpSecret = setup.body.secret;
    secrets.add(totpSecret).add(setup.body.otpAuthUrl);
    for (const c of setup.body.recoveryCodes as string[]) secrets.add(c);
    const enable = await api.post('/auth/mfa/enable', { code: totp(totpSecret) });
    ok(enable);
    keepTokens(enable.body, api);
    for (const c of enable.body.recoveryCodes as string[]) secrets.add(c);
    await expectRecord('auth.mfa.setup', {
      actorUserId: user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: user.id,
    });
    const rotated = await api.post('/auth/mfa/recovery-codes');
    ok(rotated);
    for (const c of rotated.body.recoveryCodes as string[]) secrets.add(c);
    await expectRecord('auth.mfa.recovery_codes.rotate', {
      actorUserId: user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: user.id,
    });
  });

  it('auth.mfa.passkey.register, auth.mfa.passkey.delete (software authenticator)', async () => {
    const options = await api.post('/auth/passkeys/register/options', { currentPassword: password, name: 'Walk key' });
    ok(options);
    secrets.add(options.body.options.challenge);
    const { response } = createCredential(options.body.options, t.deps.config.appUrl);
    const verify = await api.post('/auth/passkeys/register/verify', { credential: response });
    ok(verify, 201);
    const passkeyId = verify.body.passkey.id as string;
    await expectRecord('auth.mfa.passkey.register', {
      actorUserId: user.id,
      partnerId,
      orgId,
      resourceType: 'passkey',
      resourceId: passkeyId,
    });
    ok(await api.delete(`/auth/passkeys/${passkeyId}`, { body: { currentPassword: password } }));
    await expectRecord('auth.mfa.passkey.delete', {
      actorUserId: user.id,
      partnerId,
      orgId,
      resourceType: 'passkey',
      resourceId: passkeyId,
    });
  });

  it('auth.mfa.disable', async () => {
    const res = await api.post('/auth/mfa/disable', { currentPassword: password, code: totp(totpSecret) });
    ok(res);
    keepTokens(res.body, api);
    await expectRecord('auth.mfa.disable', {
      actorUserId: user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: user.id,
    });
  });

  it('auth.password.change', async () => {
    const next = strongPassword();
    secrets.add(next);
    const res = await api.post('/auth/change-password', { currentPassword: password, newPassword: next });
    ok(res);
    password = next;
    keepTokens(res.body, api);
    await expectRecord('auth.password.change', {
      actorUserId: user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: user.id,
    });
  });

  it('auth.refresh.reuse_detected (result denied): a rotated-out refresh token presented again', async () => {
    const csrf = () => ({ 'x-service-csrf': api.cookies.get('service_csrf_token')! });
    const old = api.cookies.get('service_refresh_token')!;
    const first = await api.post('/auth/refresh', undefined, { token: null, headers: csrf() });
    ok(first);
    keepTokens(first.body, api);
    t.clock.advance(11_000); // past the window in which the same client's second try is a lost race, not a replay
    const replay = new WalkClient(t.baseUrl);
    replay.cookies.set('service_refresh_token', old);
    replay.cookies.set('service_csrf_token', 'walk-csrf-value-0123456789');
    const res = await replay.post('/auth/refresh', undefined, {
      headers: { 'x-service-csrf': 'walk-csrf-value-0123456789' },
    });
    expect(res.status, res.text).toBe(401);
    await expectRecord('auth.refresh.reuse_detected', {
      actorUserId: user.id,
      partnerId,
      orgId,
      result: 'denied',
      resourceType: 'session',
    });
  });

  it('auth.password.reset (through the mailed link)', async () => {
    ok(await api.post('/auth/forgot-password', { email: user.email }));
    const m = await mail.waitFor(user.email, (x) => /reset your password/i.test(x.subject));
    const token = linkToken(m);
    const next = strongPassword();
    secrets.add(token).add(next);
    ok(await api.post('/auth/reset-password', { token, newPassword: next }));
    password = next;
    await expectRecord('auth.password.reset', {
      actorUserId: user.id,
      partnerId,
      orgId,
      resourceType: 'user',
      resourceId: user.id,
    });
  });

  it('user.logout', async () => {
    const res = await api.post('/auth/login', { email: user.email, password });
    ok(res);
    keepTokens(res.body, api);
    ok(await api.post('/auth/logout'));
    await expectRecord('user.logout', { actorUserId: user.id, partnerId, orgId, resourceType: 'session' });
  });
});

describe('the walk covers the whole catalogue of events', () => {
  it('every audited action was triggered over HTTP and found', () => {
    const missing = [...AUDITED_ACTIONS, ...EXTRA_AUDITED_ACTIONS].filter((a) => !walked.has(a));
    expect(missing).toEqual([]);
    expect(AUDITED_ACTIONS).toHaveLength(21);
    expect(EXTRA_AUDITED_ACTIONS).toHaveLength(5);
  });

  it('no record holds a password, token, TOTP secret, recovery code, challenge or client secret the walk used', async () => {
    const all = await t.deps.db.select().from(auditLogs);
    expect(all.length).toBeGreaterThanOrEqual(AUDITED_ACTIONS.length + EXTRA_AUDITED_ACTIONS.length);
    expect(secrets.size).toBeGreaterThan(15);
    expect(codes.size).toBeGreaterThanOrEqual(2);
    const leaks: string[] = [];
    for (const row of all) {
      const text = JSON.stringify({ ...row, hash: undefined, prevHash: undefined });
      for (const s of secrets) if (text.includes(s)) leaks.push(`${row.action} holds ${s.slice(0, 8)}…`);
      const details = JSON.stringify(row.details);
      for (const c of codes)
        if (new RegExp(`(^|[^0-9A-Za-z])${c}([^0-9A-Za-z]|$)`).test(details))
          leaks.push(`${row.action} holds code ${c}`);
    }
    expect(leaks).toEqual([]);
  });
});

describe('refusals that matter are recorded with result denied', () => {
  it('a refusal on an administrative route (forbidden_self_action, mfa_required): the actor, the partner, the route, the code', async () => {
    const self = await adminApi.post(`/users/${admin.user.id}/role`, { roleId: ORG_TECH });
    expect(self.body.code).toBe('forbidden_self_action');
    const r1 = await waitForRecord(adminApi, {
      action: 'access.denied',
      actorUserId: admin.user.id,
      resourceId: admin.user.id,
    });
    expect(r1).toMatchObject({ result: 'denied', partnerId, orgId: null, resourceType: 'user', userAgent: UA });
    expect(r1.details).toEqual({ method: 'POST', route: '/api/v1/users/:id/role', errorCode: 'forbidden_self_action' });

    // A session that has not passed MFA may not reset another user's MFA (step-up); the refusal names the organisation.
    const noMfa = new WalkClient(t.baseUrl);
    noMfa.token = (
      await sessionFor(t, admin.user.id, { scope: 'partner', partnerId, roleId: SYSTEM_ROLES[0].id }, false)
    ).accessToken;
    const victim = await createUser(t);
    await addOrgMember(t, { orgId, userId: victim.id });
    const res = await noMfa.post(`/users/${victim.id}/mfa/reset`, undefined, { query: { orgId } });
    expect(res.body.code).toBe('mfa_required');
    const r2 = await waitForRecord(adminApi, { action: 'access.denied', resourceId: victim.id });
    expect(r2).toMatchObject({ result: 'denied', actorUserId: admin.user.id, partnerId, orgId, resourceType: 'user' });
    expect(r2.details.errorCode).toBe('mfa_required');
    // The refused change itself left no success record.
    expect(await listAll(adminApi, { action: 'user.mfa_reset', resourceId: victim.id })).toEqual([]);
  });

  it("a refusal for want of full organisation access is recorded in the partner's trail", async () => {
    const limited = await signedInPartnerMember(t, partnerId, { orgAccess: 'selected', orgIds: [orgId] });
    expect((await limited.api.get('/users')).body.code).toBe('full_org_access_required');
    const r = await waitForRecord(adminApi, { action: 'access.denied', actorUserId: limited.user.id });
    expect(r).toMatchObject({ result: 'denied', partnerId, orgId: null });
    expect(r.details).toMatchObject({ method: 'GET', route: '/api/v1/users', errorCode: 'full_org_access_required' });
  });

  it("X-Forwarded-For is ignored without TRUST_PROXY: the recorded IP is the peer's", async () => {
    const res = await adminApi.patch(
      '/users/me',
      { name: 'Spoofed' },
      { headers: { 'x-forwarded-for': '203.0.113.66' } },
    );
    ok(res);
    const rows = await listAll(adminApi, { action: 'user.profile.update', actorUserId: admin.user.id });
    expect(rows[0]!.ip).toBe('127.0.0.1');
  });
});
