// Expiry that people notice: the sweep mails both sides' admins 30, 7 and 1 days before a relationship ends and once
// it has ended, each notice once; it records the expiry, moves an auto-extending relationship on by 180 days, and lets
// an unanswered request lapse. Ends are moved through the module's own repository; the mail is caught by SMTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRelationship, updateRelationship } from '../../src/modules/relationships/repo.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  auditRecords,
  createOrg,
  createPartner,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { expectStatus, ORG_ADMIN, PARTNER_ADMIN, PARTNER_TECH, PARTNER_VIEWER } from '../onboarding/helpers.js';

let t: TestApp;
let mail: MailCatcher;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const DAY = 86_400_000;

async function world() {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const partnerAdmin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
  return { partner, org, partnerAdmin, orgAdmin };
}
type World = Awaited<ReturnType<typeof world>>;

async function approved(w: World, body: Record<string, unknown>) {
  const d = await w.partnerAdmin.api.raw.request('POST', '/relationships', {
    body: { orgId: w.org.id, name: `Rel ${Date.now()}`, duration: 'P1Y', roleIds: [PARTNER_VIEWER], ...body },
  });
  expectStatus(d, 201);
  expectStatus(await w.partnerAdmin.api.post(`/relationships/${d.body.id}/request`), 200);
  return expectStatus(await w.orgAdmin.api.post(`/relationships/${d.body.id}/approve`), 200).body;
}

const endIn = (id: string, ms: number) =>
  updateRelationship(t.deps.db, id, { endsAt: new Date(t.clock.now().getTime() + ms) });
/** Expiry notices (not the approval request) about the relationship, to one address. */
const notices = (to: string, name: string) =>
  mail.messages.filter((m) => m.to.includes(to) && m.text.includes(name) && /(ends|ended) on/.test(m.text));

describe('notices at 30, 7 and 1 days and at the end, to both sides, once each', () => {
  it('a relationship walked through its last month', async () => {
    const w = await world();
    const rel = await approved(w, {});
    await t.deps.relationshipNotices.sweep();
    expect(notices(w.orgAdmin.user.email, rel.name)).toHaveLength(0); // a year left: nothing due

    await endIn(rel.id, 20 * DAY);
    await t.deps.relationshipNotices.sweep();
    await mail.waitFor(w.orgAdmin.user.email, (m) => m.text.includes(rel.name) && /ends on/.test(m.text));
    await mail.waitFor(w.partnerAdmin.user.email, (m) => m.text.includes(rel.name));
    await t.deps.relationshipNotices.sweep();
    await new Promise((r) => setTimeout(r, 300));
    expect(notices(w.orgAdmin.user.email, rel.name)).toHaveLength(1);
    expect((await findRelationship(t.deps.db, rel.id))?.noticedDays).toBe(30);

    await endIn(rel.id, 5 * DAY);
    await t.deps.relationshipNotices.sweep();
    await mail.waitFor(w.orgAdmin.user.email, () => notices(w.orgAdmin.user.email, rel.name).length === 2);
    expect((await findRelationship(t.deps.db, rel.id))?.noticedDays).toBe(7);

    await endIn(rel.id, 12 * 3_600_000);
    await t.deps.relationshipNotices.sweep();
    await mail.waitFor(w.orgAdmin.user.email, () => notices(w.orgAdmin.user.email, rel.name).length === 3);

    await endIn(rel.id, -1000);
    const swept = await t.deps.relationshipNotices.sweep();
    expect(swept.expired).toBeGreaterThanOrEqual(1);
    const ended = await mail.waitFor(
      w.orgAdmin.user.email,
      (m) => m.text.includes(rel.name) && /ended on/.test(m.text),
    );
    expect(ended.text).toContain(`/relationships/${rel.id}`);
    expect((await findRelationship(t.deps.db, rel.id))?.status).toBe('expired');
    expect(await auditRecords(t, 'relationship.expire', rel.id)).toHaveLength(1);
    await t.deps.relationshipNotices.sweep();
    expect(await auditRecords(t, 'relationship.expire', rel.id)).toHaveLength(1);
    expect(notices(w.orgAdmin.user.email, rel.name)).toHaveLength(4);
  });
});

describe('the sweep records what the clock decides', () => {
  it('an auto-extending relationship moves on by 180 days, without notices', async () => {
    const w = await world();
    const rel = await approved(w, { roleIds: [PARTNER_TECH], autoExtend: true });
    await endIn(rel.id, -1000);
    const before = (await findRelationship(t.deps.db, rel.id))!.endsAt!;
    await t.deps.relationshipNotices.sweep();
    const after = (await findRelationship(t.deps.db, rel.id))!;
    expect(after.status).toBe('active');
    expect(after.endsAt!.getTime() - before.getTime()).toBe(180 * DAY);
    expect(await auditRecords(t, 'relationship.extend', rel.id)).toHaveLength(1);
    expect(notices(w.orgAdmin.user.email, rel.name)).toHaveLength(0);
  });

  it('a request unanswered for 90 days lapses to expired', async () => {
    const w = await world();
    const d = await w.partnerAdmin.api.raw.request('POST', '/relationships', {
      body: { orgId: w.org.id, name: 'Lapsing', duration: 'P1Y', roleIds: [PARTNER_VIEWER] },
    });
    expectStatus(await w.partnerAdmin.api.post(`/relationships/${d.body.id}/request`), 200);
    await updateRelationship(t.deps.db, d.body.id, { requestExpiresAt: new Date(t.clock.now().getTime() - 1000) });
    await t.deps.relationshipNotices.sweep();
    expect((await findRelationship(t.deps.db, d.body.id))?.status).toBe('expired');
    expect(await auditRecords(t, 'relationship.expire', d.body.id)).toHaveLength(1);
  });
});
