// How a record is written: the client IP honours TRUST_PROXY; details keep no secret-named key at any depth and hold
// only what PostgreSQL can store (so a change is never refused, nor a chain falsely broken, for its audit record);
// refusals are audited without letting one caller flood the trail.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs } from '../../src/db/schema/index.js';
import { DENIED_FLOOD_LIMIT } from '../../src/modules/audit/denied.js';
import { verifyChain } from '../../src/modules/audit/verify.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  createOrg,
  createPartner,
  createUser,
  addPartnerMember,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { listAll, waitForRecord } from './helpers.js';

const ORG_VIEWER = SYSTEM_ROLES[5].id;
const PASSWORD = 'correct horse battery staple 42';

let t: TestApp;
let partnerId: string;
let admin: SignedInMember;
beforeAll(async () => {
  t = await startApp({ TRUST_PROXY: 'true' });
  partnerId = (await createPartner(t)).id;
  admin = await signedInPartnerMember(t, partnerId);
});
afterAll(async () => t?.close());

describe('the client IP of a record honours TRUST_PROXY', () => {
  it('behind a trusted proxy, the address X-Forwarded-For names is recorded', async () => {
    const user = await createUser(t, { password: PASSWORD });
    await addPartnerMember(t, { partnerId, userId: user.id, roleId: SYSTEM_ROLES[2].id });
    const res = await t
      .client()
      .post(
        '/auth/login',
        { email: user.email, password: PASSWORD },
        { headers: { 'x-forwarded-for': '198.51.100.7', 'user-agent': 'proxied-client/2' } },
      );
    expect(res.status, res.text).toBe(200);
    const [login] = await listAll(admin.api, { action: 'user.login', actorUserId: user.id });
    expect(login).toMatchObject({ ip: '198.51.100.7', userAgent: 'proxied-client/2', partnerId, orgId: null });
  });
});

describe('details are stored as hashed, and never with a secret-named key', () => {
  it('keys naming secrets are dropped at every depth; Dates, NUL and lone surrogates become storable text; the chain verifies', async () => {
    const deep = { a: { b: { c: { d: { e: { f: { g: { password: 'deep-secret' } } } } } } } };
    const id = await t.deps.db.transaction((tx) =>
      t.deps.audit.record(
        tx,
        {
          action: 'recording.test',
          partnerId,
          resourceId: 'nul\u0000here',
          details: {
            when: new Date('2030-01-02T03:04:05.678Z'),
            nul: 'a\u0000b',
            lone: 'x\ud800y',
            pair: '😀',
            skipped: undefined,
            token: 't',
            nested: { clientSecret: 's', ok: 1 },
            deep,
          },
        },
        { ip: '127.0.0.1', userAgent: 'ua\udc00' },
      ),
    );
    const [row] = await t.deps.db.select().from(auditLogs).where(eq(auditLogs.id, id));
    expect(row!.details).toEqual({
      when: '2030-01-02T03:04:05.678Z',
      nul: 'a\ufffdb',
      lone: 'x\ufffdy',
      pair: '😀',
      nested: { ok: 1 },
      deep: { a: { b: { c: { d: { e: { f: '[too deep]' } } } } } },
    });
    expect(row!.resourceId).toBe('nul\ufffdhere');
    expect(row!.userAgent).toBe('ua\ufffd');
    expect(JSON.stringify(row)).not.toContain('deep-secret');
    expect(await verifyChain(t.deps.db, partnerId)).toMatchObject({ ok: true, firstBrokenId: null });
  });

  it('a change whose details hold a lone surrogate (a role name from a JSON body) is made and recorded', async () => {
    const res = await admin.api.post('/roles', { name: 'Lone \ud800 surrogate', permissions: [] });
    expect(res.status, res.text).toBe(201);
    const [rec] = await listAll(admin.api, { action: 'role.create', resourceId: res.body.id });
    expect(rec!.details.name).toBe('Lone \ufffd surrogate');
    expect(await verifyChain(t.deps.db, partnerId)).toMatchObject({ ok: true });
  });
});

describe('refusals are audited, but one caller cannot flood the trail', () => {
  it(`at most ${DENIED_FLOOD_LIMIT} denied records per user per minute; the rest are logged`, async () => {
    const org = await createOrg(t, partnerId);
    const viewer = await signedInOrgMember(t, { id: org.id, partnerId }, { roleId: ORG_VIEWER });
    const answers = [];
    for (let i = 0; i < DENIED_FLOOD_LIMIT + 5; i++) answers.push((await viewer.api.get('/audit-logs')).status);
    expect(new Set(answers)).toEqual(new Set([403]));
    await waitForRecord(admin.api, { action: 'access.denied', actorUserId: viewer.user.id }, () => true);
    const deadline = Date.now() + 5000;
    while (!/denied attempt not audited/.test(t.logs()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 25));
    // The records are written after each answer: wait until the writes settle, then count.
    const settle = Date.now() + 15_000;
    let recorded = await listAll(admin.api, { action: 'access.denied', actorUserId: viewer.user.id });
    while (recorded.length < DENIED_FLOOD_LIMIT && Date.now() < settle) {
      await new Promise((r) => setTimeout(r, 100));
      recorded = await listAll(admin.api, { action: 'access.denied', actorUserId: viewer.user.id });
    }
    await new Promise((r) => setTimeout(r, 300));
    recorded = await listAll(admin.api, { action: 'access.denied', actorUserId: viewer.user.id });
    expect(recorded).toHaveLength(DENIED_FLOOD_LIMIT);
    expect(recorded.every((r) => r.orgId === org.id && r.result === 'denied')).toBe(true);
    expect(t.logs()).toMatch(/denied attempt not audited: too many from this user/);
  });
});
