// Device-level answers at scale: a batch of 1,000 device evaluations is one round trip whose SQL does not grow with the
// batch (the subject read once, the devices' owners in one statement), and "which devices may this technician run
// scripts on in this organisation" is a paged query, not 1,000 evaluations. The decision epoch moves with what a
// decision reads, and only then.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { countStatements, isBackground, type StatementLog } from '../support/statement-count.js';
import { createDevices, createSite, signedInOrgMember } from '../support/fixtures.js';
import { ORG_TECH } from '../onboarding/helpers.js';
import { buildWorld, device, user, type World } from './world.js';

let t: TestApp;
let w: World;
let log: StatementLog;
let many: { id: string }[];
/** An organisation technician restricted to the site of the 1,000 devices' first half. */
let restricted: string;
let half: Set<string>;

beforeAll(async () => {
  t = await startApp();
  w = await buildWorld(t);
  const org = w.a.orgs[1];
  const siteA = await createSite(t, org.id);
  const siteB = await createSite(t, org.id);
  const names = (p: string) => Array.from({ length: 500 }, (_, i) => `${p}-${i}`);
  const first = await createDevices(t, org, siteA.id, names('a'));
  const second = await createDevices(t, org, siteB.id, names('b'));
  many = [...first, ...second];
  half = new Set(first.map((d) => d.id));
  restricted = (await signedInOrgMember(t, org, { roleId: ORG_TECH, siteIds: [siteA.id] })).user.id;
  log = countStatements(t.testDb.database);
});
afterAll(async () => {
  log?.restore();
  await t?.close();
});

const requestStatements = () => log.statements().filter((s) => !isBackground(s));
/**
 * What the decision reads: the caller's own key check (and the row-security context set around each transaction)
 * come and go with the key cache's age, not with the batch, so they are left out of the comparison.
 */
const decisionStatements = () =>
  requestStatements().filter((s) => !s.startsWith('gh_api_key_by_prefix') && !s.startsWith('select set_config('));

describe('a batch of 1,000 device evaluations', () => {
  it('answers in one round trip, in order, with a number of statements that does not depend on the batch', async () => {
    const ask = (n: number, subject: string) =>
      w.pdpA.call('evaluations', {
        subject: user(subject),
        action: { name: 'scripts:execute' },
        evaluations: many.slice(0, n).map((d) => ({ resource: device(d.id) })),
      });
    await ask(1, restricted); // warm the role cache and the key's last-used time
    log.reset();
    const small = await ask(10, restricted);
    const smallCount = decisionStatements().length;
    log.reset();
    const res = await ask(1000, restricted);
    const bigCount = decisionStatements().length;
    expect(small.status).toBe(200);
    expect(res.status, res.text).toBe(200);
    expect(res.body.evaluations).toHaveLength(1000);
    const expected = many.map((d) => half.has(d.id));
    expect(res.body.evaluations.map((e: { decision: boolean }) => e.decision)).toEqual(expected);
    expect(res.body.evaluations[999].context.denied_by).toBe('site');
    expect(bigCount, requestStatements().join('\n')).toBeLessThanOrEqual(smallCount);
    expect(bigCount).toBeLessThan(20);
  });

  it('a partner technician across two organisations: the subject is read once per organisation, not per device', async () => {
    log.reset();
    const res = await w.pdpA.call('evaluations', {
      subject: user(w.a.tech.user.id),
      action: { name: 'devices:execute' },
      evaluations: [...many.slice(0, 500), ...w.devices].map((d) => ({ resource: device(d.id) })),
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.evaluations.every((e: { decision: boolean }) => e.decision)).toBe(true);
    expect(requestStatements().length).toBeLessThan(25);
  });
});

describe('resource search: which devices may this technician run scripts on in this organisation', () => {
  it('pages through the answer by query: every page costs the same few statements, and the pages together are exactly the allowed devices', async () => {
    const found: string[] = [];
    const counts: number[] = [];
    let token: string | undefined;
    do {
      log.reset();
      const res = await w.pdpA.call('resource', {
        subject: user(restricted),
        action: { name: 'scripts:execute' },
        resource: { type: 'device', properties: { organization_id: w.a.orgs[1].id } },
        page: token ? { token } : { limit: 200 },
      });
      expect(res.status, res.text).toBe(200);
      counts.push(requestStatements().length);
      found.push(...res.body.results.map((r: { id: string }) => r.id));
      token = res.body.page.next_token || undefined;
    } while (token);
    expect(found.sort()).toEqual([...half].sort());
    // The site restriction is in the query: three pages of 200 (the last one short), not five pages of mostly nothing.
    expect(counts.length).toBeLessThanOrEqual(3);
    expect(Math.max(...counts)).toBeLessThan(15);
  });
});

describe('the decision epoch', () => {
  const epochOf = async () =>
    (
      await w.pdpA.call('evaluation', {
        subject: user(w.a.orgViewer.user.id),
        resource: device(w.devices[1]!.id),
        action: { name: 'devices:read' },
      })
    ).body.context.epoch as number;

  it('stays while nothing a decision reads changes, and moves with each thing that does', async () => {
    const db = t.deps.db;
    const e0 = await epochOf();
    await db.execute(sql`update devices set hostname = 'renamed' where id = ${w.devices[1]!.id}`);
    expect(await epochOf()).toBe(e0);
    const changes = [
      sql`update organization_users set site_ids = array[${w.sites[0]!.id}]::uuid[] where user_id = ${w.a.orgViewer.user.id}`,
      sql`insert into device_group_members (device_id, group_id) values (${w.devices[2]!.id}, ${w.groups[1]!.id})`,
      sql`update devices set site_id = ${w.sites[0]!.id} where id = ${w.devices[1]!.id}`,
      sql`update organizations set settings = settings || '{"mspAccess":"allowed"}'::jsonb where id = ${w.a.orgs[0].id}`,
      sql`update users set status = 'active' where id = ${w.a.orgViewer.user.id}`,
      sql`update authz_state set epoch = epoch + 1 where id = 1`,
    ];
    let last = e0;
    for (const change of changes) {
      await db.execute(change);
      const now = await epochOf();
      expect(now, String(change.queryChunks[0])).toBeGreaterThan(last);
      last = now;
    }
  });

  it('the decision changes with the epoch: a site restriction narrows, the device moving into the site widens again', async () => {
    const db = t.deps.db;
    const ask = () =>
      w.pdpA.call('evaluation', {
        subject: user(w.a.orgViewer.user.id),
        resource: device(w.devices[3]!.id),
        action: { name: 'devices:read' },
      });
    await db.execute(sql`update organization_users set site_ids = null where user_id = ${w.a.orgViewer.user.id}`);
    const before = await ask();
    expect(before.body.decision).toBe(false); // another organisation's device
    const own = () =>
      w.pdpA.call('evaluation', {
        subject: user(w.a.orgViewer.user.id),
        resource: device(w.devices[2]!.id),
        action: { name: 'devices:read' },
      });
    const open = await own();
    expect(open.body.decision).toBe(true);
    await db.execute(
      sql`update organization_users set site_ids = array[${w.sites[1]!.id}]::uuid[] where user_id = ${w.a.orgViewer.user.id}`,
    );
    const narrowed = await own();
    expect(narrowed.body).toMatchObject({ decision: false, context: { denied_by: 'site' } });
    expect(narrowed.body.context.epoch).toBeGreaterThan(open.body.context.epoch);
  });
});
