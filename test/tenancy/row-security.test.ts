// Row-level security, the second wall: every tenant table has forced RLS and a policy; the application
// runs as a role that owns nothing and cannot bypass it; a query with one partner's Scope and no `where` sees none
// of another partner's rows and cannot write into it. Proved on whichever database the suite runs on.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RowReach, asReach, asSystem, runWithRowHolder, SYSTEM_CONTEXTS } from '../../src/db/row-security.js';
import { ROUTE_CONTEXTS } from '../../src/http/row-context.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  createContact,
  createDevice,
  createDeviceGroup,
  createOrg,
  createPartner,
  createSite,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';

let t: TestApp;
const rows = async <T>(q: ReturnType<typeof sql>) =>
  (((await t.deps.db.execute(q)) as unknown as { rows: T[] }).rows ?? []) as T[];

interface World {
  partnerId: string;
  orgA: string;
  orgB: string;
}
let p: World;
let q: World;

async function world(): Promise<World> {
  const partner = await createPartner(t);
  const orgA = await createOrg(t, partner.id);
  const orgB = await createOrg(t, partner.id);
  for (const org of [orgA, orgB]) {
    const site = await createSite(t, org.id);
    await createDeviceGroup(t, org.id, { siteId: site.id });
    await createDevice(t, org, site.id);
    await createContact(t, org.id);
  }
  await signedInPartnerMember(t, partner.id);
  await signedInOrgMember(t, orgA);
  return { partnerId: partner.id, orgA: orgA.id, orgB: orgB.id };
}

let tenantTables: { table: string; hasOrg: boolean }[];
beforeAll(async () => {
  t = await startApp();
  p = await world();
  q = await world();
  tenantTables = (
    await rows<{ table_name: string; has_org: boolean }>(sql`
      select c.relname as table_name, bool_or(a.attname = 'org_id') as has_org
      from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where c.relkind = 'r' and c.relnamespace = 'public'::regnamespace and a.attname in ('partner_id', 'org_id')
      group by c.relname order by 1`)
  ).map((r) => ({ table: r.table_name, hasOrg: r.has_org }));
}, 120_000);
afterAll(async () => t?.close());

const partnerScope = (w: World): RowReach => ({ partnerId: w.partnerId, orgIds: 'all', userId: null });
const countWhere = (table: string, where: ReturnType<typeof sql>) =>
  rows<{ n: number }>(sql`select count(*)::int as n from ${sql.identifier(table)} where ${where}`).then((r) => r[0]!.n);

describe('the catalogue: every table with partner_id or org_id has forced row-level security and a policy', () => {
  it('reads pg_class and pg_policy: no tenant table is left out', async () => {
    const state = await rows<{ relname: string; rls: boolean; forced: boolean; policies: number }>(sql`
      select c.relname, c.relrowsecurity as rls, c.relforcerowsecurity as forced,
             (select count(*)::int from pg_policy pol where pol.polrelid = c.oid) as policies
      from pg_class c where c.relkind = 'r' and c.relnamespace = 'public'::regnamespace`);
    const byName = new Map(state.map((s) => [s.relname, s]));
    expect(tenantTables.length).toBeGreaterThan(20);
    const missing = tenantTables
      .map(({ table }) => byName.get(table)!)
      .filter((s) => !s.rls || !s.forced || s.policies === 0)
      .map((s) => s.relname);
    expect(missing).toEqual([]);
    // organizations is keyed by its own id and partner_id: listed too.
    expect(tenantTables.map((x) => x.table)).toContain('organizations');
  });

  it('the application runs as gatehouse_app: no superuser, no BYPASSRLS, owner of no table', async () => {
    const [me] = await asReach(partnerScope(p), () =>
      rows<{ who: string; sup: boolean; bypass: boolean; owns: number }>(sql`
        select current_user as who, r.rolsuper as sup, r.rolbypassrls as bypass,
               (select count(*)::int from pg_class c where c.relowner = r.oid and c.relkind = 'r') as owns
        from pg_roles r where r.rolname = current_user`),
    );
    expect(me).toEqual({ who: 'gatehouse_app', sup: false, bypass: false, owns: 0 });
  });

  it('every system context is named once, with its purpose; every route context is one of them', () => {
    for (const [name, purpose] of Object.entries(SYSTEM_CONTEXTS)) expect(purpose.length, name).toBeGreaterThan(20);
    for (const ctx of Object.values(ROUTE_CONTEXTS)) expect(Object.keys(SYSTEM_CONTEXTS)).toContain(ctx);
  });
});

describe("a query with one partner's Scope and no where clause", () => {
  it("returns none of another partner's rows, in any tenant table, and its own are there", async () => {
    const leaks: string[] = [];
    let own = 0;
    for (const { table } of tenantTables) {
      const partnerCol = sql`partner_id`;
      const theirs = await asReach(partnerScope(p), () => countWhere(table, sql`${partnerCol} = ${q.partnerId}`));
      if (theirs > 0) leaks.push(`${table}: ${theirs}`);
      own += await asReach(partnerScope(p), () => countWhere(table, sql`${partnerCol} = ${p.partnerId}`));
    }
    expect(leaks).toEqual([]);
    expect(own).toBeGreaterThan(10);
    // The same queries in a system context see the other partner: the wall, not an empty database, hid them.
    const seen = await asSystem('process', () => countWhere('devices', sql`partner_id = ${q.partnerId}`));
    expect(seen).toBe(2);
  });

  it('an organisation Scope sees its organisation only, not a sibling of the same partner', async () => {
    const scope: RowReach = { partnerId: p.partnerId, orgIds: [p.orgA], userId: null };
    for (const table of ['devices', 'sites', 'device_groups', 'contacts', 'organizations']) {
      const col = table === 'organizations' ? sql`id` : sql`org_id`;
      expect(await asReach(scope, () => countWhere(table, sql`${col} = ${p.orgB}`)), table).toBe(0);
      expect(await asReach(scope, () => countWhere(table, sql`${col} = ${p.orgA}`)), table).toBeGreaterThan(0);
    }
  });

  it('an all_except Scope sees every organisation of its partner but the excluded, and nothing of another partner', async () => {
    const scope: RowReach = { partnerId: p.partnerId, orgIds: { except: [p.orgA] }, userId: null };
    for (const table of ['devices', 'sites', 'device_groups', 'contacts', 'organizations']) {
      const col = table === 'organizations' ? sql`id` : sql`org_id`;
      expect(await asReach(scope, () => countWhere(table, sql`${col} = ${p.orgA}`)), table).toBe(0);
      expect(await asReach(scope, () => countWhere(table, sql`${col} = ${p.orgB}`)), table).toBeGreaterThan(0);
      expect(await asReach(scope, () => countWhere(table, sql`partner_id = ${q.partnerId}`)), table).toBe(0);
    }
    // Excluding nothing is every organisation.
    const none: RowReach = { partnerId: p.partnerId, orgIds: { except: [] }, userId: null };
    expect(await asReach(none, () => countWhere('organizations', sql`id = ${p.orgA}`))).toBe(1);
  });

  it("cannot write into another partner's rows: updates touch nothing, inserts are refused", async () => {
    const updated = await asReach(partnerScope(p), () =>
      rows<{ id: string }>(
        sql`update devices set display_name = 'owned' where partner_id = ${q.partnerId} returning id`,
      ),
    );
    expect(updated).toEqual([]);
    await expect(
      asReach(partnerScope(p), () =>
        t.deps.db.execute(sql`insert into sites (org_id, name) values (${q.orgA}, 'planted')`),
      ),
    ).rejects.toMatchObject({ cause: { code: '42501' } }); // new row violates row-level security policy
    expect(await asSystem('process', () => countWhere('devices', sql`display_name = 'owned'`))).toBe(0);
  });

  it('a request with neither a caller nor a named flow sees no tenant row', async () => {
    const n = await runWithRowHolder({ system: null, reach: () => null }, () => countWhere('devices', sql`true`));
    expect(n).toBe(0);
  });
});
