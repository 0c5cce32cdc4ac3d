// The liveness row cached per session (src/access/liveness-cache.ts) and dropped by the database's change channel
// (migration 0017): with every row warm, each change that must bite at once (revocation, a disabled or deleted user,
// membership, role, restriction or policy changes) is refused or reflected on the next request, and a channel that is
// down drops the cache and sends every request to the database (fail closed).
// Across instances: test/scale/three-instances.test.ts.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionRow } from '../../src/access/repo.js';
import { LivenessCache } from '../../src/access/liveness-cache.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { ORG_TECHNICIAN_ROLE_ID } from '../sso/helpers.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { createDevice, createOrg, createSite, partnerAdmin, signedInOrgMember } from '../support/fixtures.js';
import { claimsOf, orgMember, refresh, signIn, clientWithRefreshToken } from './helpers.js';

const ORG_VIEWER_ROLE_ID = SYSTEM_ROLES[5]!.id as string;

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => {
  await t?.close();
});

const cache = () => t.deps.authContext.liveness!;
const idsOf = (api: ApiClient) => {
  const c = claimsOf(api.token!);
  return { sid: String(c.sid), sub: String(c.sub) };
};
const cached = (api: ApiClient) => cache().peek(idsOf(api).sid, idsOf(api).sub) !== null;

/** Two requests: the first reads and caches the row, the second is answered from it. */
async function warm(api: ApiClient) {
  for (let i = 0; i < 2; i++) expect((await api.get('/users/me')).status).toBe(200);
  expect(cached(api)).toBe(true);
}

/** A change the channel is not told of (the trigger off): only a request that reads the database sees it. */
async function hiddenRename(userId: string, name: string) {
  // As the table's owner (the application's role may not alter it), in one transaction: nobody sees the trigger off.
  await t.deps.db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('role', 'none', true)`);
    await tx.execute(sql.raw('alter table users disable trigger users_liveness'));
    await tx.execute(sql`update users set name = ${name} where id = ${userId}`);
    await tx.execute(sql.raw('alter table users enable trigger users_liveness'));
  });
}

async function orgTarget() {
  const admin = await partnerAdmin(t);
  const org = await createOrg(t, admin.partner.id);
  const target = await signedInOrgMember(
    t,
    { id: org.id, partnerId: admin.partner.id },
    { roleId: ORG_TECHNICIAN_ROLE_ID },
  );
  await warm(target.api);
  return { admin, org, target };
}

describe('a warm session is answered from its cached liveness row, not the database', () => {
  it('a change the channel is never told of stays unseen until the row is dropped (the cache is really used)', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    await warm(api);
    await hiddenRename(user.id, 'Hidden From The Channel');
    expect((await api.get('/users/me')).body.name).toBe(user.name);
    cache().invalidate(`u:${user.id}`);
    expect((await api.get('/users/me')).body.name).toBe('Hidden From The Channel');
  });
});

describe('revocation is refused on the next request although the session row was cached', () => {
  it('logout', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    await warm(api);
    expect((await api.post('/auth/logout')).status).toBe(200);
    expect((await api.get('/users/me')).status).toBe(401);
  });

  it('a session ended by an administrator', async () => {
    const { admin, org, target } = await orgTarget();
    const res = await admin.api.delete(`/users/${target.user.id}/sessions/${idsOf(target.api).sid}`, {
      query: { orgId: org.id },
    });
    expect(res.status, res.text).toBe(200);
    expect((await target.api.get('/users/me')).status).toBe(401);
  });

  it('a replayed refresh token revokes the session: its access token fails next', async () => {
    const { user } = await orgMember(t);
    const victim = await signIn(t, user.email);
    const stolen = victim.refreshToken;
    expect((await refresh(victim)).status).toBe(200);
    await warm(victim);
    t.clock.advance(11_000); // past the grace in which a second presentation is a lost race, not a replay
    expect((await refresh(clientWithRefreshToken(t, stolen))).status).toBe(401);
    expect((await victim.get('/users/me')).status).toBe(401);
  });
});

describe('a disabled or deleted user is refused on the next request although the row was cached', () => {
  it('disabled by an administrator', async () => {
    const { admin, org, target } = await orgTarget();
    const res = await admin.api.patch(`/users/${target.user.id}`, { status: 'disabled' }, { query: { orgId: org.id } });
    expect(res.status, res.text).toBe(200);
    expect((await target.api.get('/users/me')).status).toBe(401);
  });

  it('disabled or deleted straight in the database (no service code, the trigger announces it)', async () => {
    const a = await orgTarget();
    await t.deps.db.execute(sql`update users set status = 'disabled' where id = ${a.target.user.id}`);
    expect((await a.target.api.get('/users/me')).status).toBe(401);
    const b = await orgTarget();
    await t.deps.db.execute(sql`delete from sessions where user_id = ${b.target.user.id}`);
    await t.deps.db.execute(sql`delete from organization_users where user_id = ${b.target.user.id}`);
    await t.deps.db.execute(sql`delete from users where id = ${b.target.user.id}`);
    expect((await b.target.api.get('/users/me')).status).toBe(401);
  });
});

describe('membership, role and restriction changes are reflected on the next request although the row was cached', () => {
  it('a removed membership is refused', async () => {
    const { admin, org, target } = await orgTarget();
    const res = await admin.api.delete(`/users/${target.user.id}`, { query: { orgId: org.id } });
    expect(res.status, res.text).toBe(200);
    expect((await target.api.get('/users/me')).status).toBe(401);
  });

  it('a role reassigned to a lesser one: never the old role again', async () => {
    const { admin, org, target } = await orgTarget();
    const res = await admin.api.post(
      `/users/${target.user.id}/role`,
      { roleId: ORG_VIEWER_ROLE_ID },
      { query: { orgId: org.id } },
    );
    expect(res.status, res.text).toBe(200);
    const me = await target.api.get('/users/me');
    if (me.status === 200) expect(me.body.roleId).toBe(ORG_VIEWER_ROLE_ID);
    else expect(me.status).toBe(401);
  });

  it("a role's permissions changed (authz epoch): the next request carries the new set", async () => {
    const admin = await partnerAdmin(t);
    const org = await createOrg(t, admin.partner.id);
    const role = await admin.api.post('/roles', {
      name: 'Cached role',
      orgId: org.id,
      permissions: [
        { resource: 'devices', action: 'read' },
        { resource: 'sites', action: 'read' },
      ],
    });
    expect(role.status, role.text).toBe(201);
    const holder = await signedInOrgMember(t, { id: org.id, partnerId: admin.partner.id }, { roleId: role.body.id });
    await warm(holder.api);
    const patch = await admin.api.patch(
      `/roles/${role.body.id}`,
      { permissions: [{ resource: 'devices', action: 'read' }] },
      { query: { orgId: org.id } },
    );
    expect(patch.status, patch.text).toBe(200);
    expect((await holder.api.get('/users/me')).body.permissions).not.toContain('sites:read');
  });

  it('a site restriction changed: the next device list is the new site only', async () => {
    const admin = await partnerAdmin(t);
    const org = await createOrg(t, admin.partner.id);
    const [siteA, siteB] = [await createSite(t, org.id), await createSite(t, org.id)];
    await createDevice(t, org, siteA.id, { hostname: 'in-site-a' });
    await createDevice(t, org, siteB.id, { hostname: 'in-site-b' });
    const m = await signedInOrgMember(
      t,
      { id: org.id, partnerId: admin.partner.id },
      { roleId: ORG_TECHNICIAN_ROLE_ID, siteIds: [siteA.id] },
    );
    const hostnames = async () =>
      ((await m.api.get('/devices')).body.data as { hostname: string }[]).map((d) => d.hostname);
    expect(await hostnames()).toEqual(['in-site-a']);
    expect(cached(m.api)).toBe(true);
    await t.deps.db.execute(
      sql`update organization_users set site_ids = array[${siteB.id}]::uuid[] where user_id = ${m.user.id}`,
    );
    expect(await hostnames()).toEqual(['in-site-b']);
  });
});

describe("a tenant's policy change bites on the next request although the row was cached", () => {
  it("the organisation's IP allow-list no longer admits the caller's address", async () => {
    const { org, target } = await orgTarget();
    await t.deps.db.execute(
      sql`update organizations set settings = ${JSON.stringify({ security: { ipAllowlist: ['203.0.113.0/24'] } })}::jsonb where id = ${org.id}`,
    );
    const res = await target.api.get('/users/me');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('ip_not_allowed');
  });
});

describe('fail closed: with the change channel down the cache is dropped and every request reads the database', () => {
  it('channel stopped: nothing is served or stored from the cache; an unannounced change is seen at once; restarted, caching resumes', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    await warm(api);
    await cache().stop();
    try {
      expect(cache().size).toBe(0);
      await hiddenRename(user.id, 'Seen Without The Channel');
      const me = await api.get('/users/me');
      expect(me.status).toBe(200);
      expect(me.body.name).toBe('Seen Without The Channel');
      expect(cached(api)).toBe(false);
    } finally {
      await cache().start(t.deps.db);
    }
    await warm(api);
  });

  it.skipIf(!process.env.DATABASE_URL)(
    'PostgreSQL: the listening connection killed: the next request reads the database; after reconnecting, the cache starts empty',
    async () => {
      const { user } = await orgMember(t);
      const api = await signIn(t, user.email);
      await warm(api);
      // As the login role (a superuser here): the application's role may not end another role's backend.
      await t.deps.db.transaction(async (tx) => {
        await tx.execute(sql`select set_config('role', 'none', true)`);
        await tx.execute(
          sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'gatehouse-liveness' and datname = current_database()`,
        );
      });
      await hiddenRename(user.id, 'Seen While Reconnecting');
      const me = await api.get('/users/me');
      expect(me.status).toBe(200);
      expect(me.body.name).toBe('Seen While Reconnecting');
      await expect
        .poll(async () => (await api.get('/users/me'), cached(api)), { timeout: 10_000, interval: 200 })
        .toBe(true);
    },
  );
});

describe('the cache never outlives what it was told, nor its bounds', () => {
  const row = (sid: string, uid = 'u1') => ({ session_id: sid, user_id: uid }) as unknown as SessionRow;
  const healthy = { healthy: () => true, sync: async () => true, close: async () => {} };
  function detached(opts: { max?: number; maxAgeMs?: number; now?: () => number } = {}) {
    const c = new LivenessCache(opts);
    Object.assign(c, { channel: healthy });
    return c;
  }

  it('a row read before a change is announced is not stored after it (the read may predate the change)', () => {
    const c = detached();
    const ticket = c.ticket();
    c.invalidate('s:other-session'); // any announcement while the row was being read
    c.set(ticket, row('s1'));
    expect(c.peek('s1', 'u1')).toBeNull();
    c.set(c.ticket(), row('s1'));
    expect(c.peek('s1', 'u1')).not.toBeNull();
  });

  it("a user's announcement drops every session of that user; '*' and unknown payloads drop everything", () => {
    const c = detached();
    for (const [sid, uid] of [
      ['a', 'u1'],
      ['b', 'u1'],
      ['c', 'u2'],
    ] as const)
      c.set(c.ticket(), row(sid, uid));
    c.invalidate('u:u1');
    expect([c.peek('a', 'u1'), c.peek('b', 'u1')]).toEqual([null, null]);
    expect(c.peek('c', 'u2')).not.toBeNull();
    c.invalidate('something new');
    expect(c.size).toBe(0);
  });

  it('a row is served only to its own user, for at most maxAgeMs, and at most `max` rows are kept', () => {
    let now = 0;
    const c = detached({ max: 2, maxAgeMs: 1000, now: () => now });
    c.set(c.ticket(), row('a'));
    expect(c.peek('a', 'someone-else')).toBeNull();
    c.set(c.ticket(), row('a'));
    now = 999;
    expect(c.peek('a', 'u1')).not.toBeNull();
    now = 1000;
    expect(c.peek('a', 'u1')).toBeNull();
    for (const sid of ['x', 'y', 'z']) c.set(c.ticket(), row(sid));
    expect(c.size).toBe(2);
    expect(c.peek('x', 'u1')).toBeNull();
  });

  it('an unhealthy channel drops every row and nothing is stored until it is healthy again', () => {
    const c = detached();
    c.set(c.ticket(), row('a'));
    let up = false;
    Object.assign(c, { channel: { ...healthy, healthy: () => up } });
    expect(c.peek('a', 'u1')).toBeNull();
    expect(c.size).toBe(0);
    c.set(c.ticket(), row('a'));
    expect(c.size).toBe(0);
    up = true;
    c.set(c.ticket(), row('a'));
    expect(c.size).toBe(1);
  });
});
