// Tamper evidence: the database refuses UPDATE, DELETE and TRUNCATE on audit_logs; an attacker who switches the
// triggers off (the table owner can) still cannot change or remove a record without GET /audit-logs/verify naming
// the first broken one. Concurrent writers (on PostgreSQL, really concurrent) keep every chain intact.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs } from '../../src/db/schema/index.js';
import { recordHash } from '../../src/modules/audit/chain.js';
import { contentOf, verifyAllChains } from '../../src/modules/audit/verify.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  createOrg,
  createPartner,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { appendRecords, asTamperer } from './seed.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

/** A partner with an auditor and `n` records of its own chain (ids oldest first). */
async function partnerWithChain(n: number) {
  const partner = await createPartner(t);
  const auditor = await signedInPartnerMember(t, partner.id);
  const ids = await appendRecords(t.deps.db, partner.id, n, (i) => ({
    action: 'tamper.test',
    details: { i, amount: 100 },
  }));
  return { partnerId: partner.id, auditor, ids };
}

const verify = async (m: SignedInMember) => {
  const res = await m.api.get('/audit-logs/verify');
  expect(res.status, res.text).toBe(200);
  return res.body as { ok: boolean; checked: number; firstBrokenId: string | null };
};

/** The database error behind drizzle's wrapper. */
async function refusal(p: Promise<unknown>): Promise<{ code?: string; message?: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as { cause?: { code?: string; message?: string }; code?: string; message?: string };
    return { code: e.cause?.code ?? e.code, message: e.cause?.message ?? e.message };
  }
  throw new Error('the statement was not refused');
}

describe('the table is append-only: the database refuses changes from anyone who leaves the triggers on', () => {
  it('UPDATE, DELETE and TRUNCATE are refused (insufficient_privilege) and change nothing', async () => {
    const { ids } = await partnerWithChain(3);
    const run = (q: ReturnType<typeof sql>) => t.deps.db.transaction((tx) => tx.execute(q));
    expect(
      await refusal(run(sql`update audit_logs set details = '{"i":1,"amount":1}'::jsonb where id = ${ids[1]}`)),
    ).toMatchObject({ code: '42501', message: expect.stringMatching(/append-only/) });
    expect(await refusal(run(sql`delete from audit_logs where id = ${ids[1]}`))).toMatchObject({ code: '42501' });
    expect(await refusal(run(sql`truncate audit_logs`))).toMatchObject({ code: '42501' });
    const [row] = await t.deps.db.select().from(auditLogs).where(eq(auditLogs.id, ids[1]!));
    expect(row!.details).toEqual({ i: 1, amount: 100 });
  });
});

describe('GET /audit-logs/verify names the first broken record', () => {
  it('an intact chain: ok, every record checked, nothing broken', async () => {
    const { auditor, ids } = await partnerWithChain(2500); // several verify batches
    expect(await verify(auditor)).toEqual({ ok: true, checked: ids.length, firstBrokenId: null });
  });

  it("one record's details altered in the database: that record is the first broken one; other chains stay intact", async () => {
    const victim = await partnerWithChain(7);
    const bystander = await partnerWithChain(4);
    await asTamperer(t.deps.db, (tx) =>
      tx.execute(sql`update audit_logs set details = '{"i":3,"amount":1}'::jsonb where id = ${victim.ids[3]}`),
    );
    const [row] = await t.deps.db.select().from(auditLogs).where(eq(auditLogs.id, victim.ids[3]!));
    expect(row!.details).toEqual({ i: 3, amount: 1 }); // the tamper really happened
    expect(await verify(victim.auditor)).toEqual({ ok: false, checked: 7, firstBrokenId: victim.ids[3] });
    expect(await verify(bystander.auditor)).toEqual({ ok: true, checked: 4, firstBrokenId: null });
  });

  it('a record altered and its hash recomputed: the next record no longer links to it', async () => {
    const { auditor, ids } = await partnerWithChain(5);
    await asTamperer(t.deps.db, async (tx) => {
      const [row] = await tx.select().from(auditLogs).where(eq(auditLogs.id, ids[1]!));
      const forged = { ...contentOf(row!), details: { i: 1, amount: 0 } };
      const hash = recordHash(forged, row!.prevHash);
      await tx.update(auditLogs).set({ details: forged.details, hash }).where(eq(auditLogs.id, ids[1]!));
    });
    expect(await verify(auditor)).toEqual({ ok: false, checked: 5, firstBrokenId: ids[2] });
  });

  it('a deleted record: the record after it is the first broken one', async () => {
    const { auditor, ids } = await partnerWithChain(6);
    await asTamperer(t.deps.db, (tx) => tx.execute(sql`delete from audit_logs where id = ${ids[2]}`));
    expect(await verify(auditor)).toEqual({ ok: false, checked: 5, firstBrokenId: ids[3] });
  });

  it('the first record deleted: the new first record still points at a predecessor', async () => {
    const { auditor, ids } = await partnerWithChain(3);
    await asTamperer(t.deps.db, (tx) => tx.execute(sql`delete from audit_logs where id = ${ids[0]}`));
    expect(await verify(auditor)).toEqual({ ok: false, checked: 2, firstBrokenId: ids[1] });
  });

  it('the triggers are back on after the tamper transaction', async () => {
    const { ids } = await partnerWithChain(1);
    expect(
      await refusal(t.deps.db.transaction((tx) => tx.execute(sql`delete from audit_logs where id = ${ids[0]}`))),
    ).toMatchObject({ code: '42501' });
  });
});

describe('concurrent writers keep the chains intact', () => {
  it('many requests of one partner and its organisations at once, and of another partner: every chain verifies', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const auditor = await signedInPartnerMember(t, partner.id);
    const members = await Promise.all(Array.from({ length: 6 }, () => signedInPartnerMember(t, partner.id)));
    const orgMembers = await Promise.all(
      Array.from({ length: 6 }, () => signedInOrgMember(t, { id: org.id, partnerId: partner.id })),
    );
    const other = await partnerWithChain(1);
    const before = (await verify(auditor)).checked;
    const writes = [...members, ...orgMembers].flatMap((m, i) => [
      m.api.patch('/users/me', { name: `Concurrent ${i}a` }),
      m.api.patch('/users/me', { name: `Concurrent ${i}b` }),
      other.auditor.api.patch('/users/me', { name: `Other ${i}` }),
    ]);
    const answers = await Promise.all(writes);
    expect(answers.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
    expect(await verify(auditor)).toEqual({ ok: true, checked: before + 24, firstBrokenId: null });
    expect(await verify(other.auditor)).toEqual({ ok: true, checked: 1 + 12, firstBrokenId: null });
    const chains = await verifyAllChains(t.deps.db);
    expect(chains.find((c) => c.partnerId === partner.id)).toMatchObject({ ok: true, checked: before + 24 });
  });
});
