// The hot queries use indexes on large tenants: every statement the app really sends for the
// per-request session check and for each list endpoint (first page and a deep page) is captured at the driver and
// EXPLAINed with its own parameters on a seeded, ANALYZEd database. None may sequentially scan a large table.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { analyzeAsOwner } from '../support/db.js';
import { startApp, type TestApp } from '../support/app.js';
import type { PathOf } from '../support/api-types.js';
import { createPartner, partnerAdmin } from '../support/fixtures.js';

/** Tables that grow with tenants: a sequential scan of one of them is a query that slows down as customers grow. */
const LARGE = [
  'users',
  'sessions',
  'partner_users',
  'organization_users',
  'organizations',
  'sites',
  'devices',
  'device_groups',
  'audit_logs',
  'contacts',
  'passkeys',
];
// device_group_members is read by `device_id in (<the page's device ids>)`; at this test's size (~10k rows) the planner
// rightly reads the table instead; at scale its primary key (device_id, group_id) serves it: asserted below.

type Captured = { text: string; values: unknown[] | undefined; kind: 'query' | 'exec' };
let t: TestApp;
let admin: Awaited<ReturnType<typeof partnerAdmin>>;
let captured: Captured[] = [];
let capturing = false;
let explain: (c: Captured) => Promise<unknown>;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}
const seqScans = (n: PlanNode): string[] => [
  ...(n['Node Type'] === 'Seq Scan' && n['Relation Name'] ? [n['Relation Name']] : []),
  ...(n.Plans ?? []).flatMap(seqScans),
];

async function seed(
  partnerId: string,
  orgs: number,
  techs: number,
  members: number,
  devices: number,
  audit: number,
  tag: string,
) {
  const db = t.deps.db;
  const [partnerTech, orgTech] = [SYSTEM_ROLES[1].id, SYSTEM_ROLES[4].id];
  await db.execute(
    sql`insert into organizations (partner_id, name, slug) select ${partnerId}, ${tag} || ' customer ' || g, ${tag} || '-customer-' || g from generate_series(1, ${orgs}::int) g`,
  );
  await db.execute(
    sql`insert into sites (org_id, name) select id, 'Main' from organizations where partner_id = ${partnerId}`,
  );
  await db.execute(
    sql`insert into users (email, name) select ${tag} || '-u' || g || '@plans.example', 'U ' || g from generate_series(1, ${techs + members}::int) g`,
  );
  await db.execute(sql`
    with u as (select id, row_number() over (order by id) as g from users where email like ${`${tag}-u%`})
    insert into partner_users (partner_id, user_id, role_id, org_access) select ${partnerId}, id, ${partnerTech}, 'all' from u where g <= ${techs}`);
  await db.execute(sql`
    with o as (select id, row_number() over (order by id) - 1 as i from organizations where partner_id = ${partnerId}),
         u as (select id, row_number() over (order by id) as g from users where email like ${`${tag}-u%`})
    insert into organization_users (org_id, user_id, role_id) select o.id, u.id, ${orgTech} from u join o on o.i = u.g % ${orgs} where u.g > ${techs}`);
  await db.execute(sql`
    with o as (select o.id, s.id as site_id, row_number() over (order by o.id) - 1 as i from organizations o join sites s on s.org_id = o.id where o.partner_id = ${partnerId})
    insert into devices (org_id, site_id, hostname, os_type, agent_token_hash)
    select o.id, o.site_id, ${tag} || '-host-' || g, 'linux', md5(${tag} || g) from generate_series(1, ${devices}::int) g join o on o.i = g % ${orgs}`);
  await db.execute(sql`
    insert into sessions (user_id, token_hash, expires_at, absolute_expires_at) select id, md5(id::text), now() + interval '7 days', now() + interval '30 days' from users where email like ${`${tag}-u%`}`);
  await db.execute(sql`
    insert into passkeys (user_id, name, credential_id, public_key) select id, 'Key', md5('cred' || id::text), 'pk' from users where email like ${`${tag}-u%`} and right(id::text, 1) in ('0', '1')`);
  await db.execute(
    sql`insert into device_groups (org_id, name) select id, 'Servers' from organizations where partner_id = ${partnerId}`,
  );
  await db.execute(sql`
    insert into device_group_members (device_id, group_id) select d.id, g.id from devices d join device_groups g on g.org_id = d.org_id where d.hostname like ${`${tag}-host-%`} and right(d.id::text, 1) < '8'`);
  await db.execute(sql`
    with o as (select id, row_number() over (order by id) - 1 as i from organizations where partner_id = ${partnerId})
    insert into audit_logs (at, action, result, partner_id, org_id, hash)
    select now(), 'device.update', 'success', ${partnerId}, o.id, md5(g::text) from generate_series(1, ${audit}::int) g join o on o.i = g % ${orgs}`);
}

beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_API: '100000/60' });
  admin = await partnerAdmin(t);
  const other = await createPartner(t);
  await seed(admin.partner.id, 150, 1500, 6000, 6000, 10000, 'a');
  await seed(other.id, 150, 1500, 6000, 6000, 10000, 'b');
  await analyzeAsOwner(t.deps.db);

  // Capture at the driver: node-postgres Pool.query (text or { name, text, values }) or PGlite query / exec.
  const client = (t.deps.db as unknown as { $client: Record<string, (...a: unknown[]) => Promise<unknown>> }).$client;
  const query = client.query!.bind(client);
  const exec = typeof client.exec === 'function' && t.deps.database.kind === 'pglite' ? client.exec.bind(client) : null;
  client.query = (q: unknown, values?: unknown, ...rest: unknown[]) => {
    if (capturing) {
      const text = typeof q === 'string' ? q : (q as { text: string }).text;
      // drizzle passes { text, rowMode, types } and the values beside it; a named statement carries them inside.
      captured.push({
        text,
        values:
          typeof q === 'string'
            ? (values as unknown[] | undefined)
            : ((q as { values?: unknown[] }).values ?? (values as unknown[] | undefined)),
        kind: 'query',
      });
    }
    return query(q, values, ...rest);
  };
  if (exec)
    client.exec = (q: unknown, ...rest: unknown[]) => {
      if (capturing) captured.push({ text: q as string, values: undefined, kind: 'exec' });
      return exec(q, ...rest);
    };
  explain = async (c) => {
    const text = `explain (format json) ${c.text}`;
    if (c.kind === 'exec')
      return ((await exec!(text)) as { rows: Record<string, unknown>[] }[])[0]!.rows[0]!['QUERY PLAN'];
    // EXPLAIN takes no bind parameters: each $n becomes its value as a literal (the values the app bound).
    const withValues = text.replace(/\$(\d+)\b/g, (_m, n: string) => literal((c.values ?? [])[Number(n) - 1]));
    const r = (await query(withValues)) as { rows: Record<string, unknown>[] };
    return r.rows[0]!['QUERY PLAN'];
  };
}, 300_000); // seeding ~40k rows per table on PGlite takes a minute on a busy machine
afterAll(async () => t?.close());

function literal(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  const s =
    v instanceof Date
      ? v.toISOString()
      : Array.isArray(v)
        ? `{${v.map((x) => `"${String(x)}"`).join(',')}}`
        : String(v);
  return `'${s.replace(/'/g, "''")}'`;
}

/** The statements one request sends (reads only), each with the large tables it sequentially scans. */
async function plansOf(path: PathOf<'get'>, query: Record<string, string> = {}) {
  captured = [];
  capturing = true;
  const res = await admin.api.get(path, { query });
  capturing = false;
  expect(res.status, res.text).toBe(200);
  const reads = captured.filter((c) => /^\s*(select|with|execute)\b/i.test(c.text));
  expect(reads.length).toBeGreaterThan(0);
  const out: { text: string; full: string; seq: string[]; root: PlanNode }[] = [];
  for (const c of reads) {
    let plan = (await explain(c)) as unknown;
    if (typeof plan === 'string') plan = JSON.parse(plan);
    const root = (plan as { Plan: PlanNode }[])[0]!.Plan;
    out.push({
      text: c.text.replace(/\s+/g, ' ').slice(0, 160),
      seq: seqScans(root).filter((r) => LARGE.includes(r)),
      root,
      full: c.text,
    });
  }
  return { body: res.body, plans: out };
}

const nodeTypes = (n: PlanNode): string[] => [n['Node Type'], ...(n.Plans ?? []).flatMap(nodeTypes)];

const noLargeSeqScan = (plans: { text: string; seq: string[] }[]) =>
  expect(plans.filter((p) => p.seq.length > 0)).toEqual([]);

describe('hot queries on a large tenant use indexes, never a sequential scan of a large table', () => {
  it('the per-request session check (the prepared liveness statement) behind GET /users/me', async () => {
    const { plans } = await plansOf('/users/me');
    expect(plans.some((p) => /gh_liveness|session_id/.test(p.text))).toBe(true);
    noLargeSeqScan(plans);
  });

  it('GET /orgs/organizations: first page and the page after a deep cursor', async () => {
    const first = await plansOf('/orgs/organizations', { limit: '20' });
    noLargeSeqScan(first.plans);
    const deep = await plansOf('/orgs/organizations', {
      limit: '20',
      cursor: await deepCursor('/orgs/organizations', 2),
    });
    noLargeSeqScan(deep.plans);
  });

  it('GET /devices across the partner, and in one organisation: first and deep pages', async () => {
    noLargeSeqScan((await plansOf('/devices', { limit: '50' })).plans);
    noLargeSeqScan((await plansOf('/devices', { limit: '50', cursor: await deepCursor('/devices', 5) })).plans);
    const orgId = (await admin.api.get('/orgs/organizations', { query: { limit: '1' } })).body.data[0]!.id as string;
    noLargeSeqScan((await plansOf('/devices', { limit: '10', orgId })).plans);
  });

  it('GET /devices for the partner, deep page: one index scan of (partner, lower(hostname), id) in page order, no sort', async () => {
    const { plans, body } = await plansOf('/devices', { limit: '50', cursor: await deepCursor('/devices', 20) });
    expect((body as { data: unknown[] }).data).toHaveLength(50);
    const list = plans.find((p) => p.full.includes('from "devices"') && p.full.includes('"devices"."partner_id"'))!;
    expect(list, plans.map((p) => p.text).join('\n')).toBeTruthy();
    expect(JSON.stringify(list.root)).toContain('"Index Name":"devices_partner_lhostname_id_idx"');
    expect(nodeTypes(list.root)).not.toContain('Sort');
    expect(list.seq).toEqual([]);
  });

  it('GET /users for the partner and for one organisation: first and deep pages', async () => {
    noLargeSeqScan((await plansOf('/users', { limit: '50' })).plans);
    noLargeSeqScan((await plansOf('/users', { limit: '50', cursor: await deepCursor('/users', 5) })).plans);
    const orgId = (await admin.api.get('/orgs/organizations', { query: { limit: '1' } })).body.data[0]!.id as string;
    noLargeSeqScan((await plansOf('/users', { limit: '10', orgId })).plans);
  });

  it('GET /users for the partner, deep page: one index scan of (partner, email_key, user) in page order, no sort', async () => {
    for (const [path, pages, index, table] of [
      ['/users', 20, 'partner_users_partner_email_key_idx', 'partner_users'],
    ] as const) {
      const { plans, body } = await plansOf(path, { limit: '50', cursor: await deepCursor(path, pages) });
      expect((body as { data: unknown[] }).data).toHaveLength(50);
      const list = plans.find((p) => p.full.includes(`"${table}"."email_key"`))!;
      expect(list, plans.map((p) => p.text).join('\n')).toBeTruthy();
      expect(JSON.stringify(list.root)).toContain(`"Index Name":"${index}"`);
      expect(nodeTypes(list.root)).not.toContain('Sort');
      expect(list.seq).toEqual([]);
    }
    // One organisation's members: the same shape on organization_users.
    const orgId = (await admin.api.get('/orgs/organizations', { query: { limit: '1' } })).body.data[0]!.id as string;
    const { plans } = await plansOf('/users', { limit: '10', orgId });
    const list = plans.find((p) => p.full.includes('"organization_users"."email_key"'))!;
    expect(JSON.stringify(list.root)).toContain('"Index Name":"organization_users_org_email_key_idx"');
    // This organisation has tens of members: under row security's filter the planner may read them by the same index
    // and sort that handful (a bitmap scan); what it must not do is sort a large set.
    const sorts = JSON.stringify(list.root).match(/"Node Type":"Sort","Plan Rows":(\d+)/g) ?? [];
    for (const sort of sorts) expect(Number(sort.split(':').pop())).toBeLessThan(100);
  });

  it('the sort key follows the e-mail: a changed address moves the member in the list', async () => {
    const first = (await admin.api.get('/users', { query: { limit: '1' } })).body.data[0] as {
      id: string;
      email: string;
    };
    await t.deps.db.execute(
      sql`update users set email = ${`zzzz-moved-${first.id}@plans.example`} where id = ${first.id}`,
    );
    const r = await t.deps.db.execute(sql`select email_key from partner_users where user_id = ${first.id}`);
    expect((r as unknown as { rows: { email_key: string }[] }).rows[0]!.email_key).toBe(
      `zzzz-moved-${first.id}@plans.example`,
    );
    const after = (await admin.api.get('/users', { query: { limit: '1' } })).body.data[0] as { id: string };
    expect(after.id).not.toBe(first.id);
  });

  it('device group memberships of a page are found by the primary key (device_id leads)', async () => {
    const r = await t.deps.db.execute(sql`select indexdef from pg_indexes where tablename = 'device_group_members'`);
    const defs = (r as unknown as { rows: { indexdef: string }[] }).rows.map((x) => x.indexdef);
    expect(defs.some((d) => /UNIQUE INDEX .*\(device_id, group_id\)/.test(d))).toBe(true);
  });

  it('the audit list reads an index in seq order, newest first, at any depth', async () => {
    // The app runs it in a transaction with bitmap scans off (src/modules/audit/repo.ts); the same here.
    const plan = await t.deps.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_bitmapscan = off`);
      const r = await tx.execute(
        sql`explain (format json) select * from audit_logs where partner_id = ${admin.partner.id} and seq < 15000 order by seq desc limit 51`,
      );
      return (r as unknown as { rows: Record<string, unknown>[] }).rows[0]!['QUERY PLAN'];
    });
    const root = ((typeof plan === 'string' ? JSON.parse(plan) : plan) as { Plan: PlanNode }[])[0]!.Plan;
    expect(seqScans(root)).toEqual([]);
    expect(JSON.stringify(root)).toMatch(/"Index Name":"audit_logs_(partner_seq_idx|pkey)"/);
  });
});

/** The nextCursor after `pages` pages of 50. */
async function deepCursor(path: PathOf<'get'>, pages: number): Promise<string> {
  let cursor: string | undefined;
  for (let i = 0; i < pages; i++) {
    const res = await admin.api.get(path, { query: { limit: '50', ...(cursor ? { cursor } : {}) } });
    expect(res.status, res.text).toBe(200);
    cursor = res.body.nextCursor as string;
    expect(cursor).toBeTruthy();
  }
  return cursor!;
}
