// The database itself holds the rules: whatever code path writes, these constraints refuse bad rows.
// Raw SQL on purpose: the point is what PostgreSQL enforces, not what the application checks first.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_ENTRIES, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { createOrg, createPartner, createUser } from '../support/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

interface PgFailure {
  code: string;
  constraint?: string;
  message: string;
}

/** The PostgreSQL error a statement fails with (SQLSTATE, constraint); fails the test if it succeeds. */
async function refused(p: Promise<unknown>): Promise<PgFailure> {
  try {
    await p;
  } catch (err) {
    const c = ((err as { cause?: unknown }).cause ?? err) as PgFailure;
    return { code: c.code, constraint: c.constraint, message: c.message };
  }
  throw new Error('the database accepted the statement');
}

const UNIQUE = '23505';
const TOO_LONG = '22001';
const BAD_ENUM = '22P02';
const CHECK = '23514';
const FOREIGN_KEY = '23503';
/** ON DELETE RESTRICT: PostgreSQL 18 (PGlite) reports restrict_violation, 15 reports foreign_key_violation. */
const RESTRICT = expect.stringMatching(/^(23001|23503)$/);
const INSUFFICIENT_PRIVILEGE = '42501';

const run = (q: ReturnType<typeof sql>) => t.deps.db.execute(q);
const rows = async <T>(q: ReturnType<typeof sql>) => ((await t.deps.db.execute(q)) as unknown as { rows: T[] }).rows;
const hex = () => randomBytes(4).toString('hex');
/** An email address of exactly n characters. */
const emailOf = (n: number) => `${'e'.repeat(n - 7 - 8)}${hex()}@x.test`;

describe('an email is unique whatever its case', () => {
  it('A@x.test then a@X.TEST is refused by the database', async () => {
    await run(sql`insert into users (email, name) values ('A@x.test', 'First')`);
    expect(await refused(run(sql`insert into users (email, name) values ('a@X.TEST', 'Second')`))).toMatchObject({
      code: UNIQUE,
      constraint: 'users_email_lower_key',
    });
    const found = await rows<{ email: string }>(sql`select email from users where lower(email) = 'a@x.test'`);
    expect(found.map((r) => r.email)).toEqual(['A@x.test']);
  });

  it('changing another user to a case variant of a taken email is refused too', async () => {
    const other = await createUser(t, { email: `b-${hex()}@x.test` });
    expect(await refused(run(sql`update users set email = 'a@x.test' where id = ${other.id}`))).toMatchObject({
      code: UNIQUE,
      constraint: 'users_email_lower_key',
    });
  });
});

describe('field size limits are enforced by the database', () => {
  it('user email: 255 characters fit, 256 do not', async () => {
    await run(sql`insert into users (email, name) values (${emailOf(255)}, 'Max email')`);
    expect(
      await refused(run(sql`insert into users (email, name) values (${emailOf(256)}, 'Long email')`)),
    ).toMatchObject({ code: TOO_LONG });
  });

  it('user name: 255 characters fit, 256 do not', async () => {
    await run(sql`insert into users (email, name) values (${emailOf(40)}, ${'n'.repeat(255)})`);
    expect(
      await refused(run(sql`insert into users (email, name) values (${emailOf(40)}, ${'n'.repeat(256)})`)),
    ).toMatchObject({ code: TOO_LONG });
  });

  it('role name: 100 characters fit, 101 do not', async () => {
    const partner = await createPartner(t);
    const insert = (name: string) =>
      run(
        sql`insert into roles (partner_id, scope, applies_to, name) values (${partner.id}, 'partner', 'partner', ${name})`,
      );
    await insert('r'.repeat(100));
    expect(await refused(insert('r'.repeat(101)))).toMatchObject({ code: TOO_LONG });
  });

  it('permission resource: 100 characters fit, 101 do not; action: 50 fit, 51 do not', async () => {
    const resource = `zz${hex()}`;
    const insert = (res: string, act: string) =>
      run(sql`insert into permissions (resource, action) values (${res}, ${act})`);
    try {
      await insert(resource.padEnd(100, 'r'), 'read');
      await insert(resource, 'a'.repeat(50));
      expect(await refused(insert(resource.padEnd(101, 'r'), 'read'))).toMatchObject({ code: TOO_LONG });
      expect(await refused(insert(resource, 'a'.repeat(51)))).toMatchObject({ code: TOO_LONG });
    } finally {
      await run(sql`delete from permissions where resource like ${`${resource}%`}`);
    }
  });

  it('session ip_address: 45 characters fit, 46 do not', async () => {
    const user = await createUser(t);
    const insert = (ip: string) =>
      run(sql`insert into sessions (user_id, token_hash, ip_address, expires_at, absolute_expires_at)
              values (${user.id}, ${hex() + hex()}, ${ip}, now() + interval '1 hour', now() + interval '1 day')`);
    const longestIp = 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255'; // the longest textual IPv6 address
    expect(longestIp).toHaveLength(45);
    await insert(longestIp);
    expect(await refused(insert(`${longestIp}0`))).toMatchObject({ code: TOO_LONG });
  });
});

describe('enumerations are checked by the database', () => {
  it("a user status 'bogus' is refused", async () => {
    expect(
      await refused(run(sql`insert into users (email, name, status) values (${emailOf(30)}, 'Bogus', 'bogus')`)),
    ).toMatchObject({
      code: BAD_ENUM,
    });
    const user = await createUser(t);
    expect(await refused(run(sql`update users set status = 'bogus' where id = ${user.id}`))).toMatchObject({
      code: BAD_ENUM,
    });
    expect(await refused(run(sql`update users set mfa_method = 'email' where id = ${user.id}`))).toMatchObject({
      code: BAD_ENUM,
    });
    for (const status of ['active', 'invited', 'disabled'])
      await run(sql`update users set status = ${status} where id = ${user.id}`);
  });

  it("a role scope 'global' is refused", async () => {
    expect(
      await refused(
        run(sql`insert into roles (scope, applies_to, name, is_system) values ('global', 'partner', 'Global', true)`),
      ),
    ).toMatchObject({ code: BAD_ENUM });
  });
});

describe('a role belongs to exactly the owner its scope names (roles_scope_owner)', () => {
  let partnerId: string;
  let orgId: string;
  beforeAll(async () => {
    partnerId = (await createPartner(t)).id;
    orgId = (await createOrg(t, partnerId)).id;
  });

  const insertRole = (r: { scope: string; appliesTo: string; partner?: boolean; org?: boolean; isSystem?: boolean }) =>
    run(sql`insert into roles (scope, applies_to, partner_id, org_id, is_system, name)
            values (${r.scope}, ${r.appliesTo}, ${r.partner ? partnerId : null}, ${r.org ? orgId : null}, ${r.isSystem ?? false}, ${`Role ${hex()}`})`);

  it('a partner role of a partner and an organisation role of an organisation are accepted', async () => {
    await insertRole({ scope: 'partner', appliesTo: 'partner', partner: true });
    await insertRole({ scope: 'organization', appliesTo: 'organization', org: true });
    await insertRole({ scope: 'organization', appliesTo: 'organization', partner: true, org: true });
  });

  it.each([
    ['a system role owned by a partner', { scope: 'system', appliesTo: 'partner', partner: true, isSystem: true }],
    [
      'a system role owned by an organisation',
      { scope: 'system', appliesTo: 'organization', org: true, isSystem: true },
    ],
    ['a system-scope role not flagged system', { scope: 'system', appliesTo: 'partner', isSystem: false }],
    ['a partner role without a partner', { scope: 'partner', appliesTo: 'partner' }],
    ['a partner role owned by an organisation', { scope: 'partner', appliesTo: 'partner', partner: true, org: true }],
    ['a partner role for organisation memberships', { scope: 'partner', appliesTo: 'organization', partner: true }],
    ['a partner role flagged system', { scope: 'partner', appliesTo: 'partner', partner: true, isSystem: true }],
    [
      'an organisation role without an organisation',
      { scope: 'organization', appliesTo: 'organization', partner: true },
    ],
    ['an organisation role for partner memberships', { scope: 'organization', appliesTo: 'partner', org: true }],
    [
      'an organisation role flagged system',
      { scope: 'organization', appliesTo: 'organization', org: true, isSystem: true },
    ],
  ])('refuses %s', async (_what, role) => {
    expect(await refused(insertRole(role))).toMatchObject({ code: CHECK, constraint: 'roles_scope_owner' });
  });
});

describe('tenant deletion: a partner with organisations is kept, an organisation takes its sites with it', () => {
  it('deleting a partner that still has organisations is refused (restrict)', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    expect(await refused(run(sql`delete from partners where id = ${partner.id}`))).toMatchObject({
      code: RESTRICT,
      constraint: 'organizations_partner_id_partners_id_fk',
    });
    expect(await rows(sql`select 1 from partners where id = ${partner.id}`)).toHaveLength(1);
    expect(await rows(sql`select 1 from organizations where id = ${org.id}`)).toHaveLength(1);
  });

  it('deleting an organisation cascades to its sites, devices, groups and memberships, not to the users', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const other = await createOrg(t, partner.id);
    const user = await createUser(t);
    const [s1] = await rows<{ id: string }>(
      sql`insert into sites (org_id, name) values (${org.id}, 'HQ') returning id`,
    );
    await run(sql`insert into sites (org_id, name) values (${org.id}, 'Branch'), (${other.id}, 'HQ')`);
    await run(
      sql`insert into devices (org_id, site_id, hostname, os_type, agent_token_hash) values (${org.id}, ${s1!.id}, 'pc-1', 'windows', ${hex() + hex()})`,
    );
    await run(sql`insert into device_groups (org_id, site_id, name) values (${org.id}, ${s1!.id}, 'Servers')`);
    await run(
      sql`insert into organization_users (org_id, user_id, role_id) values (${org.id}, ${user.id}, ${SYSTEM_ROLES[3].id})`,
    );

    await run(sql`delete from organizations where id = ${org.id}`);

    for (const table of ['sites', 'devices', 'device_groups', 'organization_users']) {
      expect(await rows(sql`select 1 from ${sql.identifier(table)} where org_id = ${org.id}`), table).toHaveLength(0);
    }
    expect(await rows(sql`select 1 from sites where org_id = ${other.id}`)).toHaveLength(1);
    expect(await rows(sql`select 1 from users where id = ${user.id}`)).toHaveLength(1);
    // With its other organisation gone as well, the partner itself can go.
    await run(sql`delete from organizations where id = ${other.id}`);
    await run(sql`delete from partners where id = ${partner.id}`);
    expect(await rows(sql`select 1 from partners where id = ${partner.id}`)).toHaveLength(0);
  });

  it('a site that still holds devices cannot be deleted on its own', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const [site] = await rows<{ id: string }>(
      sql`insert into sites (org_id, name) values (${org.id}, 'HQ') returning id`,
    );
    await run(
      sql`insert into devices (org_id, site_id, hostname, os_type, agent_token_hash) values (${org.id}, ${site!.id}, 'pc-1', 'linux', ${hex() + hex()})`,
    );
    expect(await refused(run(sql`delete from sites where id = ${site!.id}`))).toMatchObject({
      code: FOREIGN_KEY,
      constraint: 'devices_site_id_sites_id_fk',
    });
  });
});

describe('the audit trail is append-only in the database', () => {
  let id: string;
  let hash: string;
  beforeAll(async () => {
    id = await t.deps.db.transaction((tx) =>
      t.deps.audit.record(
        tx,
        { action: 'platform.test', resourceType: 'test', resourceId: 'r1', details: { n: 1 } },
        { ip: '127.0.0.1', userAgent: 'vitest' },
      ),
    );
    hash = (await rows<{ hash: string }>(sql`select hash from audit_logs where id = ${id}`))[0]!.hash;
  });

  it('an INSERT through audit.record(tx, ...) works and chains to the previous record', async () => {
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const next = await t.deps.db.transaction((tx) => t.deps.audit.record(tx, { action: 'platform.test.second' }, null));
    const [row] = await rows<{ prev_hash: string; action: string }>(
      sql`select prev_hash, action from audit_logs where id = ${next}`,
    );
    expect(row).toEqual({ prev_hash: hash, action: 'platform.test.second' });
  });

  it('UPDATE is refused by the trigger', async () => {
    expect(await refused(run(sql`update audit_logs set action = 'tampered' where id = ${id}`))).toMatchObject({
      code: INSUFFICIENT_PRIVILEGE,
      message: expect.stringMatching(/append-only \(UPDATE refused\)/),
    });
    expect(await refused(run(sql`update audit_logs set details = '{}'::jsonb`))).toMatchObject({
      code: INSUFFICIENT_PRIVILEGE,
    });
  });

  it('DELETE is refused by the trigger', async () => {
    expect(await refused(run(sql`delete from audit_logs where id = ${id}`))).toMatchObject({
      code: INSUFFICIENT_PRIVILEGE,
      message: expect.stringMatching(/append-only \(DELETE refused\)/),
    });
  });

  it('TRUNCATE is refused: the application role holds no such privilege, and the trigger refuses the owner', async () => {
    expect(await refused(run(sql`truncate audit_logs`))).toMatchObject({
      code: INSUFFICIENT_PRIVILEGE,
      message: expect.stringMatching(/permission denied for table audit_logs/),
    });
    // As the login role (the owner that runs the migrations), inside a transaction that is rolled back either way.
    const asOwner = t.deps.db.transaction(async (tx) => {
      await tx.execute(sql`select set_config('role', 'none', true)`);
      await tx.execute(sql`truncate audit_logs`);
    });
    expect(await refused(asOwner)).toMatchObject({
      code: INSUFFICIENT_PRIVILEGE,
      message: expect.stringMatching(/append-only \(TRUNCATE refused\)/),
    });
  });

  it('the record is unchanged after the attempts', async () => {
    const [row] = await rows<{ action: string; hash: string; details: unknown }>(
      sql`select action, hash, details from audit_logs where id = ${id}`,
    );
    expect(row).toEqual({ action: 'platform.test', hash, details: { n: 1 } });
  });
});

describe('the seeded catalogue is exactly src/modules/roles/catalog.ts', () => {
  const key = (p: { resource: string; action: string }) => `${p.resource}:${p.action}`;

  it('permissions: every CATALOG_ENTRIES row and *:*, nothing else', async () => {
    const seeded = await rows<{ resource: string; action: string; description: string }>(
      sql`select resource, action, description from permissions where resource not like 'zz%'`,
    );
    const expected = [...CATALOG_ENTRIES, { resource: '*', action: '*', description: 'Full administrative access' }];
    const byKey = (a: { resource: string; action: string }, b: { resource: string; action: string }) =>
      key(a).localeCompare(key(b));
    // The destructive flag is the code's (the governor reads it from the catalogue), not a column.
    const stored = expected.map(({ resource, action, description }) => ({ resource, action, description }));
    expect([...seeded].sort(byKey)).toEqual(stored.sort(byKey));
  });

  it('system roles: exactly SYSTEM_ROLES, each with exactly its permissions', async () => {
    const seededRoles = await rows<{
      id: string;
      name: string;
      scope: string;
      applies_to: string;
      force_mfa: boolean;
      description: string;
    }>(sql`select id, name, scope, applies_to, force_mfa, description from roles where is_system order by id`);
    expect(seededRoles).toEqual(
      [...SYSTEM_ROLES]
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((r) => ({
          id: r.id,
          name: r.name,
          scope: 'system',
          applies_to: r.appliesTo,
          force_mfa: r.forceMfa,
          description: r.description,
        })),
    );
    const grants = await rows<{ role_id: string; resource: string; action: string }>(
      sql`select rp.role_id, p.resource, p.action from role_permissions rp join permissions p on p.id = rp.permission_id
          join roles r on r.id = rp.role_id where r.is_system`,
    );
    for (const role of SYSTEM_ROLES) {
      const held = grants
        .filter((g) => g.role_id === role.id)
        .map(key)
        .sort();
      expect(held, role.name).toEqual([...role.permissions].sort());
    }
    expect(grants).toHaveLength(SYSTEM_ROLES.reduce((n, r) => n + r.permissions.length, 0));
  });

  it('Partner Admin holds *:* and has force_mfa on', async () => {
    const [admin] = await rows<{ force_mfa: boolean; perms: string[] }>(
      sql`select r.force_mfa, array_agg(p.resource || ':' || p.action) as perms from roles r
          join role_permissions rp on rp.role_id = r.id join permissions p on p.id = rp.permission_id
          where r.name = 'Partner Admin' and r.is_system group by r.force_mfa`,
    );
    expect(admin).toEqual({ force_mfa: true, perms: ['*:*'] });
  });
});
