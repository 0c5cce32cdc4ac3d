// Property: audit records are scoped exactly like the data they describe. A partner caller sees its partner's own
// events and those of the organisations it may access; an organisation caller its organisation's; nobody sees another
// partner's or the global chain; an orgId filter outside the scope is 404.
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, organizations } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import {
  createOrg,
  createPartner,
  createUser,
  sessionFor,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { download, jsonLines, listAll, waitForRecord } from './helpers.js';

const [, PARTNER_TECH, , , , ORG_VIEWER] = SYSTEM_ROLES.map((r) => r.id as string);

let t: TestApp;
let PARTNER1: string, PARTNER2: string, O1: string, O2: string, O3: string, Q1: string;
let p1All: SignedInMember,
  p1Selected: SignedInMember,
  p1None: SignedInMember,
  o1Admin: SignedInMember,
  p2All: SignedInMember;

/** One record per tenant, told apart by details.tag; written by the real writer in its own transaction. */
async function record(partnerId: string | null, orgId: string | null, tag: string) {
  await t.deps.db.transaction((tx) =>
    t.deps.audit.record(
      tx,
      { action: 'scope.test', partnerId, orgId, details: { tag } },
      { ip: '127.0.0.1', userAgent: 'seed' },
    ),
  );
}

const tagsSeenBy = async (api: ApiClient, query: Record<string, string> = {}) =>
  (await listAll(api, { action: 'scope.test', ...query })).map((r) => r.details.tag as string).sort();

beforeAll(async () => {
  t = await startApp();
  PARTNER1 = (await createPartner(t)).id;
  PARTNER2 = (await createPartner(t)).id;
  [O1, O2, O3] = [
    (await createOrg(t, PARTNER1)).id,
    (await createOrg(t, PARTNER1)).id,
    (await createOrg(t, PARTNER1)).id,
  ];
  Q1 = (await createOrg(t, PARTNER2)).id;
  await record(PARTNER1, null, 'p1');
  await record(PARTNER1, O1, 'o1');
  await record(PARTNER1, O2, 'o2');
  await record(PARTNER1, O3, 'o3');
  await record(PARTNER2, null, 'p2');
  await record(PARTNER2, Q1, 'q1');
  await record(null, null, 'global');
  p1All = await signedInPartnerMember(t, PARTNER1);
  p1Selected = await signedInPartnerMember(t, PARTNER1, { orgAccess: 'selected', orgIds: [O1, O2] });
  p1None = await signedInPartnerMember(t, PARTNER1, { orgAccess: 'none' });
  o1Admin = await signedInOrgMember(t, { id: O1, partnerId: PARTNER1 });
  p2All = await signedInPartnerMember(t, PARTNER2);
});
afterAll(async () => t?.close());

describe('GET /audit-logs shows each caller exactly its scope', () => {
  it('a partner caller with access to every organisation: the partner and all its organisations, not another partner, not the global chain', async () => {
    expect(await tagsSeenBy(p1All.api)).toEqual(['o1', 'o2', 'o3', 'p1']);
    expect(await tagsSeenBy(p2All.api)).toEqual(['p2', 'q1']);
  });

  it('a partner caller with selected organisations: the partner and those organisations only', async () => {
    expect(await tagsSeenBy(p1Selected.api)).toEqual(['o1', 'o2', 'p1']);
  });

  it("a partner caller with no organisation access: the partner's own events only", async () => {
    expect(await tagsSeenBy(p1None.api)).toEqual(['p1']);
  });

  it("an organisation caller: its organisation only (not the partner's own events, not a sibling organisation)", async () => {
    expect(await tagsSeenBy(o1Admin.api)).toEqual(['o1']);
  });

  it('orgId narrows to one organisation in scope', async () => {
    expect(await tagsSeenBy(p1All.api, { orgId: O2 })).toEqual(['o2']);
    expect(await tagsSeenBy(p1Selected.api, { orgId: O1 })).toEqual(['o1']);
    expect(await tagsSeenBy(o1Admin.api, { orgId: O1 })).toEqual(['o1']);
  });

  it("an orgId outside the scope is 404: an unselected organisation, another partner's, a sibling, one that never existed", async () => {
    const cases: [ApiClient, string][] = [
      [p1Selected.api, O3],
      [p1None.api, O1],
      [p1All.api, Q1],
      [p2All.api, O1],
      [o1Admin.api, O2],
      [o1Admin.api, Q1],
      [p1All.api, '00000000-0000-4000-8000-00000000beef'],
    ];
    for (const [api, orgId] of cases) {
      const res = await api.get('/audit-logs', { query: { orgId } });
      expect({ status: res.status, code: res.body.code }, `${orgId}`).toEqual({ status: 404, code: 'not_found' });
      const exp = await download(t, api.token!, { format: 'jsonl', orgId });
      expect(exp.status).toBe(404);
    }
  });

  it('the trail of a deleted organisation stays reachable to the partner (the records outlive what they describe)', async () => {
    const gone = (await createOrg(t, PARTNER1)).id;
    await record(PARTNER1, gone, 'gone');
    await t.deps.db.delete(organizations).where(eq(organizations.id, gone));
    expect(await tagsSeenBy(p1All.api, { orgId: gone })).toEqual(['gone']);
    expect((await p2All.api.get('/audit-logs', { query: { orgId: gone } })).status).toBe(404);
  });
});

describe('the audit routes are refused without their permission, and the refusal is itself audited', () => {
  it('401 without a token; 403 tenant_context_required without a tenant; 403 forbidden without audit:read / audit:export', async () => {
    expect((await t.client().get('/audit-logs')).status).toBe(401);
    const loner = await createUser(t);
    const lonerApi = t.client().withToken((await sessionFor(t, loner.id, { scope: null })).accessToken);
    expect((await lonerApi.get('/audit-logs')).body.code).toBe('tenant_context_required');

    const viewer = await signedInOrgMember(t, { id: O1, partnerId: PARTNER1 }, { roleId: ORG_VIEWER });
    const tech = await signedInPartnerMember(t, PARTNER1, { roleId: PARTNER_TECH });
    for (const api of [viewer.api, tech.api]) {
      for (const path of ['/audit-logs', '/audit-logs/export?format=csv', '/audit-logs/verify'] as const) {
        const res = await api.get(path);
        expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 403, code: 'forbidden' });
      }
    }
    // The organisation viewer's refusal lands in its organisation's trail, where the organisation's auditor sees it.
    const denied = await waitForRecord(
      o1Admin.api,
      { action: 'access.denied', actorUserId: viewer.user.id },
      (r) => r.details.route === '/api/v1/audit-logs/export',
    );
    expect(denied).toMatchObject({
      result: 'denied',
      actorEmail: viewer.user.email,
      partnerId: PARTNER1,
      orgId: O1,
      ip: '127.0.0.1',
    });
    expect(denied.details).toEqual({ method: 'GET', route: '/api/v1/audit-logs/export', errorCode: 'forbidden' });
    // The partner technician's is the partner's own event.
    const techDenied = await waitForRecord(p1All.api, { action: 'access.denied', actorUserId: tech.user.id });
    expect(techDenied).toMatchObject({ result: 'denied', partnerId: PARTNER1, orgId: null });
    expect((await listAll(o1Admin.api, { actorUserId: tech.user.id })).length).toBe(0);
  });
});

describe('the export is scoped like the list', () => {
  it("a partner caller with selected organisations exports the partner's and those organisations' records only", async () => {
    const res = await download(t, p1Selected.session.accessToken, { format: 'jsonl', action: 'scope.test' });
    expect(res.status).toBe(200);
    expect(
      jsonLines(res.text)
        .map((r) => r.details.tag)
        .sort(),
    ).toEqual(['o1', 'o2', 'p1']);
  });

  it("an organisation caller exports its organisation's records only", async () => {
    const res = await download(t, o1Admin.session.accessToken, { format: 'jsonl', action: 'scope.test' });
    expect(jsonLines(res.text).map((r) => r.details.tag)).toEqual(['o1']);
  });
});

describe("GET /audit-logs/verify checks the caller's partner chain, and only a caller who sees the whole partner may run it", () => {
  it('a partner caller with full access gets its own chain: every record of the partner, none of another', async () => {
    const res = await p2All.api.get('/audit-logs/verify');
    expect(res.status, res.text).toBe(200);
    const [{ n }] = (await t.deps.db
      .select({ n: count() })
      .from(auditLogs)
      .where(eq(auditLogs.partnerId, PARTNER2))) as [{ n: number }];
    expect(res.body).toEqual({ ok: true, checked: Number(n), firstBrokenId: null });
    expect(Number(n)).toBeGreaterThanOrEqual(2);
  });

  it('403 full_org_access_required for a partner caller with selected or no organisations; 403 forbidden for an organisation caller', async () => {
    for (const m of [p1Selected, p1None]) {
      const res = await m.api.get('/audit-logs/verify');
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 403, code: 'full_org_access_required' });
    }
    const res = await o1Admin.api.get('/audit-logs/verify');
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 403, code: 'forbidden' });
  });
});
