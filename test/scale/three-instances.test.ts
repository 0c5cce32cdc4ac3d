// Three replicas of the service (startApp + startPeer ×2) over one database and one shared store, as behind a load
// balancer: rate limits, revocation, single-use codes, role changes and every per-instance cache (verified tokens,
// roles, prepared statements, liveness rows) hold across all three. On PGlite the peers share the in-process database
// and the DATABASE store; on PostgreSQL + Redis (CI) they share the server and Redis, as in production.
import { sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORG_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { createOrg, createPartner, partnerAdmin, signedInOrgMember } from '../support/fixtures.js';
import { callbackFor, browserGet, runSsoLogin, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { createCredential } from '../support/webauthn.js';
import { freshTotp, member, PASSWORD, signIn, statuses, totpMember } from '../mfa/helpers.js';
import { exchange, idpUser, orgWithProvider, ORG_TECHNICIAN_ROLE_ID } from '../sso/helpers.js';

let t: TestApp;
let b: PeerApp;
let c: PeerApp;
let idp: TestIdp;
let all: (TestApp | PeerApp)[];

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true', RATE_LIMIT_LOGIN: '6/900' });
  b = await startPeer(t);
  c = await startPeer(t);
  all = [t, b, c];
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
});
afterAll(async () => {
  await c?.close();
  await b?.close();
  await t?.close();
  await idp?.close();
});

/** The same token and cookies, pointed at another instance. */
function on(app: TestApp | PeerApp, api: ApiClient): ApiClient {
  const x = app.client();
  x.token = api.token;
  for (const [k, v] of api.cookies) x.cookies.set(k, v);
  return x;
}

/** GET /users/me on each instance with the same token: the status each answers. */
async function meEverywhere(api: ApiClient): Promise<number[]> {
  const out: number[] = [];
  for (const app of all) out.push((await on(app, api).get('/users/me')).status);
  return out;
}

describe('rate limits are shared by the three instances', () => {
  it('sign-in attempts for one account (RATE_LIMIT_LOGIN 6/900) spread over three instances share one window: the seventh is 429 on every instance', async () => {
    const m = await member(t);
    for (let i = 0; i < 6; i++) {
      const res = await all[i % 3]!.client().post('/auth/login', { email: m.email, password: 'wrong password 123!' });
      expect(res.status, res.text).toBe(401);
    }
    for (const app of all) {
      const res = await app.client().post('/auth/login', { email: m.email, password: PASSWORD });
      expect(res.status, res.text).toBe(429);
    }
  });
});

describe('revocation reaches every instance on the next request (each with its token cache warm)', () => {
  it('logout on one instance: the token is refused on all three at once', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    expect(await meEverywhere(api)).toEqual([200, 200, 200]);
    expect((await on(b, api).post('/auth/logout')).status).toBe(200);
    expect(await meEverywhere(api)).toEqual([401, 401, 401]);
  });

  it('a user disabled on one instance is refused on all three at once', async () => {
    const admin = await partnerAdmin(t);
    const org = await createOrg(t, admin.partner.id);
    const target = await signedInOrgMember(
      t,
      { id: org.id, partnerId: admin.partner.id },
      { roleId: ORG_TECHNICIAN_ROLE_ID },
    );
    expect(await meEverywhere(target.api)).toEqual([200, 200, 200]);
    const res = await on(c, admin.api).patch(
      `/users/${target.user.id}`,
      { status: 'disabled' },
      { query: { orgId: org.id } },
    );
    expect(res.status, res.text).toBe(200);
    expect(await meEverywhere(target.api)).toEqual([401, 401, 401]);
  });

  it('a membership removed on one instance is refused on all three at once', async () => {
    const admin = await partnerAdmin(t);
    const org = await createOrg(t, admin.partner.id);
    const target = await signedInOrgMember(
      t,
      { id: org.id, partnerId: admin.partner.id },
      { roleId: ORG_TECHNICIAN_ROLE_ID },
    );
    expect(await meEverywhere(target.api)).toEqual([200, 200, 200]);
    const res = await on(b, admin.api).delete(`/users/${target.user.id}`, { query: { orgId: org.id } });
    expect(res.status, res.text).toBe(200);
    expect(await meEverywhere(target.api)).toEqual([401, 401, 401]);
  });

  it('a cached verified token still dies at its exp on every instance', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    expect(await meEverywhere(api)).toEqual([200, 200, 200]);
    t.clock.advance(15 * 60_000 + 1_000);
    expect(await meEverywhere(api)).toEqual([401, 401, 401]);
  });

  it('a token altered by one character is refused everywhere, also after the genuine one was cached', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    expect(await meEverywhere(api)).toEqual([200, 200, 200]);
    const token = api.token!;
    const i = token.lastIndexOf('.') + 10;
    const forged = api.withToken(`${token.slice(0, i)}${token[i] === 'A' ? 'B' : 'A'}${token.slice(i + 1)}`);
    expect(await meEverywhere(forged)).toEqual([401, 401, 401]);
  });
});

describe('single-use codes are single-use across three instances', () => {
  it('a TOTP step accepted on one instance is refused on the two others', async () => {
    const m = await totpMember(t);
    const code = freshTotp(t, m.secret);
    const temps: string[] = [];
    for (const app of all)
      temps.push(
        (await app.client().post('/auth/login', { email: m.email, password: PASSWORD })).body.tempToken as string,
      );
    const results = await Promise.all(
      all.map((app, i) => app.client().post('/auth/mfa/verify', { tempToken: temps[i], code })),
    );
    expect(statuses(results)).toEqual([200, 401, 401]);
  });

  it('one recovery code raced on three instances: exactly one 200', async () => {
    const m = await totpMember(t);
    const temps: string[] = [];
    for (const app of all)
      temps.push(
        (await app.client().post('/auth/login', { email: m.email, password: PASSWORD })).body.tempToken as string,
      );
    const code = m.recoveryCodes[2]!;
    const results = await Promise.all(
      all.map((app, i) => app.client().post('/auth/mfa/verify', { tempToken: temps[i]!, code })),
    );
    expect(statuses(results)).toEqual([200, 401, 401]);
  });

  it('a WebAuthn registration challenge answered on three instances at once: exactly one 201', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const opts = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'Three' });
    expect(opts.status, opts.text).toBe(200);
    const { response } = createCredential(opts.body.options, t.deps.config.appUrl);
    const results = await Promise.all(
      all.map((app) => on(app, api).post('/auth/passkeys/register/verify', { credential: response })),
    );
    expect(statuses(results)).toEqual([201, 400, 400]);
  });

  it('an SSO state issued on one instance completes on another, once; its exchange code yields tokens once across three', async () => {
    const s = await orgWithProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
    const started = await runSsoLogin(t, s.org.id, {
      idp,
      user: idpUser(`user@${s.domain}`),
      stopBeforeCallback: true,
    });
    const callback = new URL(started.callbackUrl!);
    const onB = await browserGet(new URL(`${callback.pathname}${callback.search}`, b.baseUrl), started.jar);
    expect(onB.status).toBe(302);
    const code = new URLSearchParams(new URL(onB.location!).hash.slice(1)).get('ssoCode');
    expect(code, onB.location ?? '').toBeTruthy();
    // The state is spent: the same callback on the third instance does not yield another code.
    const onC = await browserGet(new URL(`${callback.pathname}${callback.search}`, c.baseUrl), started.jar);
    expect(new URLSearchParams(new URL(onC.location ?? 'http://x/').hash.slice(1)).get('ssoCode')).toBeNull();
    const answers = await Promise.all(all.map((app) => exchange(app, code!)));
    expect(statuses(answers)).toEqual([200, 401, 401]);
  });
});

describe('role changes and caches propagate to every instance on the next request', () => {
  it('a permission removed from a custom role on one instance is gone on all three (role cache keyed by the authz epoch)', async () => {
    const admin = await partnerAdmin(t);
    const org = await createOrg(t, admin.partner.id);
    const role = await admin.api.post('/roles', {
      name: 'Three-instance role',
      orgId: org.id,
      permissions: [
        { resource: 'devices', action: 'read' },
        { resource: 'sites', action: 'read' },
      ],
    });
    expect(role.status, role.text).toBe(201);
    const holder = await signedInOrgMember(t, { id: org.id, partnerId: admin.partner.id }, { roleId: role.body.id });
    for (const app of all)
      expect((await on(app, holder.api).get('/users/me')).body.permissions).toContain('sites:read');
    const patch = await on(c, admin.api).patch(
      `/roles/${role.body.id}`,
      { permissions: [{ resource: 'devices', action: 'read' }] },
      { query: { orgId: org.id } },
    );
    expect(patch.status, patch.text).toBe(200);
    for (const app of all) {
      const me = await on(app, holder.api).get('/users/me');
      expect(me.body.permissions).toContain('devices:read');
      expect(me.body.permissions).not.toContain('sites:read');
    }
  });

  it('a role reassigned on one instance: the old token is refused on all three (its membership changed)', async () => {
    const admin = await partnerAdmin(t);
    const org = await createOrg(t, admin.partner.id);
    const target = await signedInOrgMember(
      t,
      { id: org.id, partnerId: admin.partner.id },
      { roleId: ORG_ADMIN_ROLE_ID },
    );
    for (const app of all) expect((await on(app, target.api).get('/users/me')).body.roleId).toBe(ORG_ADMIN_ROLE_ID);
    const res = await on(b, admin.api).post(
      `/users/${target.user.id}/role`,
      { roleId: ORG_TECHNICIAN_ROLE_ID },
      { query: { orgId: org.id } },
    );
    expect(res.status, res.text).toBe(200);
    for (const app of all) {
      const me = await on(app, target.api).get('/users/me');
      // Either the session is ended by the change, or it acts with the new role's permissions: never the old ones.
      if (me.status === 200) expect(me.body.permissions).not.toContain('users:write');
      else expect(me.status).toBe(401);
    }
  });

  it('a profile changed on one instance is what the two others answer next (no stale profile anywhere)', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const m = await signedInOrgMember(t, { id: org.id, partnerId: partner.id });
    await meEverywhere(m.api);
    const res = await on(c, m.api).patch('/users/me', { name: 'Renamed Everywhere' });
    expect(res.status, res.text).toBe(200);
    for (const app of all) expect((await on(app, m.api).get('/users/me')).body.name).toBe('Renamed Everywhere');
  });
});

describe('each instance caches the liveness row; a change made through another instance drops it before the next request', () => {
  /** True when every instance holds the session's liveness row (so the next request would read no SQL). */
  function cachedEverywhere(api: ApiClient): boolean[] {
    const { sid, sub } = decodeJwt(api.token!) as { sid: string; sub: string };
    return all.map((app) => app.deps.authContext.liveness!.peek(sid, sub) !== null);
  }

  it('a session ended by an administrator on one instance: refused on all three although each had the row cached', async () => {
    const admin = await partnerAdmin(t);
    const org = await createOrg(t, admin.partner.id);
    const target = await signedInOrgMember(
      t,
      { id: org.id, partnerId: admin.partner.id },
      { roleId: ORG_TECHNICIAN_ROLE_ID },
    );
    expect(await meEverywhere(target.api)).toEqual([200, 200, 200]);
    expect(cachedEverywhere(target.api)).toEqual([true, true, true]);
    const { sid } = decodeJwt(target.api.token!) as { sid: string };
    const res = await on(c, admin.api).delete(`/users/${target.user.id}/sessions/${sid}`, { query: { orgId: org.id } });
    expect(res.status, res.text).toBe(200);
    expect(await meEverywhere(target.api)).toEqual([401, 401, 401]);
  });

  it('a user disabled straight in the database (no instance wrote it): refused on all three at once', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const m = await signedInOrgMember(t, { id: org.id, partnerId: partner.id });
    expect(await meEverywhere(m.api)).toEqual([200, 200, 200]);
    expect(cachedEverywhere(m.api)).toEqual([true, true, true]);
    await t.deps.db.execute(sql`update users set status = 'disabled' where id = ${m.user.id}`);
    expect(await meEverywhere(m.api)).toEqual([401, 401, 401]);
  });
});
