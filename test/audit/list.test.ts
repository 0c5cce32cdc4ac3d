// GET /audit-logs: keyset pages newest first (stable while records keep arriving), every filter, and refusal of
// malformed queries (400 validation_failed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecordJson } from '../../src/modules/audit/schemas.js';
import { startApp, type TestApp } from '../support/app.js';
import { createOrg, signedInPartnerMember, createPartner, type SignedInMember } from '../support/fixtures.js';
import { listAll } from './helpers.js';
import { appendRecords, type SeedEvent } from './seed.js';

let t: TestApp;
let partnerId: string;
let orgId: string;
let admin: SignedInMember;
const ACTOR_A = '0b8f3c52-1d7a-4e55-9a8b-6f3e2d1c0a01';
const ACTOR_B = '0b8f3c52-1d7a-4e55-9a8b-6f3e2d1c0a02';
const T0 = Date.parse('2031-03-01T10:00:00.000Z');
/** The seeded records in append order (oldest first), with their ids. */
let seeded: (SeedEvent & { id: string })[] = [];

const event = (i: number): SeedEvent => ({
  action: ['list.alpha.one', 'list.alpha.two', 'list.beta'][i % 3]!,
  result: (['success', 'failure', 'denied'] as const)[i % 3 === 0 ? 0 : i % 2 === 0 ? 1 : 2],
  actorUserId: i % 2 === 0 ? ACTOR_A : ACTOR_B,
  actorEmail: i % 2 === 0 ? 'a@example.test' : 'b@example.test',
  orgId: i % 4 === 0 ? orgId : null,
  resourceType: 'widget',
  resourceId: `w-${i % 5}`,
  at: new Date(T0 + i * 60_000),
  details: { i },
});

const ids = (rows: AuditRecordJson[]) => rows.map((r) => r.id);
const newestFirst = (events: typeof seeded) => [...events].reverse().map((e) => e.id);

beforeAll(async () => {
  t = await startApp();
  partnerId = (await createPartner(t)).id;
  orgId = (await createOrg(t, partnerId)).id;
  admin = await signedInPartnerMember(t, partnerId);
  const made = Array.from({ length: 25 }, (_, i) => event(i));
  const newIds = await appendRecords(t.deps.db, partnerId, made.length, (i) => made[i]!);
  seeded = made.map((e, i) => ({ ...e, id: newIds[i]! }));
});
afterAll(async () => t?.close());

describe('keyset pagination, newest first', () => {
  it('pages of `limit` records, newest first, with an opaque cursor; the last page has nextCursor null', async () => {
    const pages: AuditRecordJson[][] = [];
    let cursor: string | undefined;
    do {
      const res = await admin.api.get('/audit-logs', { query: { action: 'list.*', limit: 10, cursor } });
      expect(res.status, res.text).toBe(200);
      pages.push(res.body.data);
      cursor = res.body.nextCursor ?? undefined;
      if (cursor) expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    } while (cursor);
    expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
    expect(pages.flat().map((r) => r.id)).toEqual(newestFirst(seeded));
  });

  it('default limit 50; the record has exactly the documented fields', async () => {
    const res = await admin.api.get('/audit-logs', { query: { action: 'list.*' } });
    expect(res.body.data).toHaveLength(25);
    expect(res.body.nextCursor).toBeNull();
    const newest = seeded[24]!;
    expect(res.body.data[0]).toEqual({
      id: newest.id,
      at: newest.at!.toISOString(),
      action: newest.action,
      result: newest.result,
      actorUserId: newest.actorUserId,
      actorEmail: newest.actorEmail,
      partnerId,
      orgId: newest.orgId,
      resourceType: 'widget',
      resourceId: newest.resourceId,
      ip: null,
      userAgent: null,
      details: { i: 24 },
    });
  });

  it('a page already read stays valid while new records arrive: the next page continues where it left off, no record twice', async () => {
    const other = await createPartner(t);
    const auditor = await signedInPartnerMember(t, other.id);
    const older = await appendRecords(t.deps.db, other.id, 12, (i) => ({
      action: 'arrive.old',
      at: new Date(T0 + i * 1000),
    }));
    const first = await auditor.api.get('/audit-logs', { query: { action: 'arrive.*', limit: 5 } });
    expect(ids(first.body.data)).toEqual([...older].reverse().slice(0, 5));
    const newer = await appendRecords(t.deps.db, other.id, 3, () => ({ action: 'arrive.new' }));
    const second = await auditor.api.get('/audit-logs', {
      query: { action: 'arrive.*', limit: 5, cursor: first.body.nextCursor ?? undefined },
    });
    expect(ids(second.body.data)).toEqual([...older].reverse().slice(5, 10));
    const fresh = await auditor.api.get('/audit-logs', { query: { action: 'arrive.*', limit: 5 } });
    expect(ids(fresh.body.data)).toEqual([...newer.reverse(), ...[...older].reverse().slice(0, 2)]);
  });
});

describe('filters', () => {
  const expectFilter = async (query: Record<string, string>, keep: (e: SeedEvent) => boolean) => {
    const got = ids(await listAll(admin.api, { ...query, ...(query.action ? {} : { action: 'list.*' }) }));
    const want = newestFirst(seeded.filter(keep));
    expect(want.length, 'the filter must keep some and drop some').toBeGreaterThan(0);
    expect(want.length).toBeLessThan(seeded.length);
    expect(got).toEqual(want);
  };

  it('action (exact, or a prefix ending in .*)', async () => {
    await expectFilter({ action: 'list.beta' }, (e) => e.action === 'list.beta');
    await expectFilter({ action: 'list.alpha.one' }, (e) => e.action === 'list.alpha.one');
    expect(await listAll(admin.api, { action: 'list.alpha' })).toEqual([]); // exact, not a prefix
    expect(await listAll(admin.api, { action: 'list_%.*' })).toEqual([]); // LIKE wildcards are literal
  });

  it('actorUserId, result, resourceType + resourceId, orgId', async () => {
    await expectFilter({ actorUserId: ACTOR_A }, (e) => e.actorUserId === ACTOR_A);
    await expectFilter({ result: 'failure' }, (e) => e.result === 'failure');
    await expectFilter({ result: 'denied' }, (e) => e.result === 'denied');
    await expectFilter({ resourceType: 'widget', resourceId: 'w-3' }, (e) => e.resourceId === 'w-3');
    await expectFilter({ orgId }, (e) => e.orgId === orgId);
    await expectFilter(
      { actorUserId: ACTOR_B, result: 'denied', resourceId: 'w-1' },
      (e) => e.actorUserId === ACTOR_B && e.result === 'denied' && e.resourceId === 'w-1',
    );
  });

  it('time range: from inclusive, to exclusive (ISO-8601, any offset)', async () => {
    const at = (i: number) => seeded[i]!.at!;
    await expectFilter(
      { from: at(5).toISOString(), to: at(10).toISOString() },
      (e) => e.at! >= at(5) && e.at! < at(10),
    );
    await expectFilter({ from: at(20).toISOString() }, (e) => e.at! >= at(20));
    await expectFilter({ to: at(3).toISOString() }, (e) => e.at! < at(3));
    // 11:05+01:00 is 10:05Z: the same instant as record 5.
    await expectFilter(
      { from: '2031-03-01T11:05:00+01:00', to: at(6).toISOString() },
      (e) => e.at!.getTime() === at(5).getTime(),
    );
  });

  it('refuses malformed queries with 400 validation_failed', async () => {
    const bad: Record<string, string>[] = [
      { limit: '0' },
      { limit: '201' },
      { limit: 'many' },
      { cursor: 'not-a-cursor' },
      { cursor: Buffer.from(JSON.stringify({ seq: -1 })).toString('base64url') },
      { from: 'yesterday' },
      { from: '2031-03-02T00:00:00Z', to: '2031-03-01T00:00:00Z' },
      { result: 'maybe' },
      { actorUserId: 'someone' },
      { orgId: 'x' },
      { unknown: '1' },
    ];
    for (const query of bad) {
      const res = await admin.api.get('/audit-logs', { query });
      expect({ query, status: res.status, code: res.body.code }).toEqual({
        query,
        status: 400,
        code: 'validation_failed',
      });
    }
  });
});
