// Unused standing access lapses: the partner's settings.security.standingAccessLapseDays, the warning
// mail to the member and the Partner Admins (once, caught by a real SMTP server), the lapse to eligible on two
// instances sweeping at once, the next request refused unless a just-in-time grant exists, and use resetting the clock.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerUsers } from '../../src/db/schema/index.js';
import { markMembershipUsed } from '../../src/modules/identity/index.js';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import {
  auditRecords,
  createDevice,
  createOrg,
  createPartner,
  createSite,
  sessionFor,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { clientWithRefreshToken, PASSWORD, refresh, signIn } from '../auth/helpers.js';
import { expectError, expectStatus, PARTNER_ADMIN, PARTNER_TECH } from '../onboarding/helpers.js';

const DAY = 86_400_000;
let t: TestApp;
let peer: PeerApp;
let mail: MailCatcher;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url });
  peer = await startPeer(t);
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
  await mail?.close();
});

/** A partner (lapse period set through HTTP when given) with two organisations and members who last acted now. */
async function world(days: number | null) {
  const partner = await createPartner(t);
  const orgA = await createOrg(t, partner.id);
  const orgB = await createOrg(t, partner.id);
  const device = await createDevice(t, orgA, (await createSite(t, orgA.id)).id);
  const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const techAll = await signedInPartnerMember(t, partner.id, {
    roleId: PARTNER_TECH,
    orgAccess: 'all',
    password: PASSWORD,
    mfaEnabled: false,
  });
  const techSel = await signedInPartnerMember(t, partner.id, {
    roleId: PARTNER_TECH,
    orgAccess: 'selected',
    orgIds: [orgA.id],
  });
  // The test clock may stand days ahead of the database's now() (earlier tests advanced it): they acted "now".
  for (const m of [admin, techAll, techSel])
    await markMembershipUsed(
      t.deps.db,
      m.user.id,
      { scope: 'partner', partnerId: partner.id, orgId: null, roleId: null },
      t.clock.now(),
    );
  if (days !== null)
    expectStatus(
      await admin.api.patch('/orgs/partners/me', { settings: { security: { standingAccessLapseDays: days } } }),
      200,
    );
  return { partner, orgA, orgB, device, admin, techAll, techSel };
}
type World = Awaited<ReturnType<typeof world>>;

async function membership(w: World, m: SignedInMember) {
  const [row] = await t.deps.db
    .select()
    .from(partnerUsers)
    .where(and(eq(partnerUsers.partnerId, w.partner.id), eq(partnerUsers.userId, m.user.id)));
  return row!;
}
/** A new session in the member's partner membership (the clock moved past the old access token; a session is no use). */
async function fresh(w: World, m: SignedInMember, on: TestApp | PeerApp = t) {
  const [row] = await t.deps.db
    .select({ roleId: partnerUsers.roleId })
    .from(partnerUsers)
    .where(and(eq(partnerUsers.partnerId, w.partner.id), eq(partnerUsers.userId, m.user.id)));
  const s = await sessionFor(t, m.user.id, { scope: 'partner', partnerId: w.partner.id, roleId: row!.roleId }, true);
  return on.client().withToken(s.accessToken);
}
const lapseMails = (m: SignedInMember) =>
  mail.messages.filter((x) => x.to.includes(m.user.email.toLowerCase()) && /lapses on/.test(x.subject));
const sweepBoth = () => Promise.all([t.deps.lapse.sweep(), peer.deps.lapse.sweep()]);

describe('the setting', () => {
  it('is off unless set; 7..365 days; null switches it off again', async () => {
    const w = await world(null);
    expect(
      (await w.admin.api.get('/orgs/partners/me')).body.settings.security?.standingAccessLapseDays,
    ).toBeUndefined();
    for (const bad of [6, 366, 30.5, '30'])
      expectError(
        await w.admin.api.raw.patch('/orgs/partners/me', { settings: { security: { standingAccessLapseDays: bad } } }),
        400,
        'validation_failed',
      );
    const on = expectStatus(
      await w.admin.api.patch('/orgs/partners/me', { settings: { security: { standingAccessLapseDays: 30 } } }),
      200,
    );
    expect(on.body.settings.security.standingAccessLapseDays).toBe(30);
    const off = expectStatus(
      await w.admin.api.patch('/orgs/partners/me', { settings: { security: { standingAccessLapseDays: null } } }),
      200,
    );
    expect(off.body.settings.security.standingAccessLapseDays ?? null).toBeNull();
  });

  it('off by default: a year unused changes nothing', async () => {
    const w = await world(null);
    t.clock.advance(400 * DAY);
    await sweepBoth();
    for (const m of [w.techAll, w.techSel]) expect((await membership(w, m)).lapseWarnedAt).toBeNull();
    expect((await membership(w, w.techAll)).orgAccess).toBe('all');
    expect((await membership(w, w.techSel)).orgAccess).toBe('selected');
    expect(await auditRecords(t, 'access.lapse', w.techAll.user.id)).toHaveLength(0);
    expectStatus(await (await fresh(w, w.techAll)).get(`/devices/${w.device.id}`), 200);
  });
});

describe('warning and lapse', () => {
  it('warns the member and the Partner Admins once, 7 days ahead; at the lapse standing access becomes eligible, once, on two instances', async () => {
    const w = await world(30);
    t.clock.advance(22 * DAY);
    await sweepBoth();
    expect((await membership(w, w.techAll)).lapseWarnedAt).toBeNull();

    t.clock.advance(1.5 * DAY);
    const [a, b] = await sweepBoth();
    expect(a.warned + b.warned).toBe(2);
    for (const m of [w.techAll, w.techSel]) expect((await membership(w, m)).lapseWarnedAt).not.toBeNull();
    expect((await membership(w, w.admin)).lapseWarnedAt).toBeNull();
    const toMember = await mail.waitFor(w.techAll.user.email, (x) => /lapses on/.test(x.subject));
    expect(toMember.text).toContain('30 days');
    const toAdmin = await mail.waitFor(w.admin.user.email, (x) => /about to lapse/.test(x.subject));
    expect(toAdmin.text).toContain(w.techAll.user.email);
    expect(toAdmin.text).toContain(w.techSel.user.email);
    expect(toAdmin.text).not.toContain(w.admin.user.email);

    // Later passes before the lapse warn no one again, and nothing lapses early.
    const warnedAt = (await membership(w, w.techAll)).lapseWarnedAt;
    t.clock.advance(3 * DAY);
    const again = await sweepBoth();
    expect(again[0].warned + again[1].warned + again[0].lapsed + again[1].lapsed).toBe(0);
    expect((await membership(w, w.techAll)).lapseWarnedAt).toEqual(warnedAt);
    expect(lapseMails(w.techAll)).toHaveLength(1);
    expectStatus(await (await fresh(w, w.techAll)).get(`/devices/${w.device.id}`), 200);

    t.clock.advance(4 * DAY + 3_600_000);
    const [c, d] = await sweepBoth();
    expect(c.lapsed + d.lapsed).toBe(2);
    const all = await membership(w, w.techAll);
    expect(all.orgAccess).toBe('eligible');
    expect([...all.orgIds].sort()).toEqual([w.orgA.id, w.orgB.id].sort());
    const sel = await membership(w, w.techSel);
    expect(sel).toMatchObject({ orgAccess: 'eligible', orgIds: [w.orgA.id] });
    expect((await membership(w, w.admin)).orgAccess).toBe('all');
    const audit = await auditRecords(t, 'access.lapse', w.techAll.user.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      partnerId: w.partner.id,
      details: expect.objectContaining({ from: 'all', to: 'eligible', lapseDays: 30 }),
    });
    expect(await auditRecords(t, 'access.lapse', w.techSel.user.id)).toHaveLength(1);
    expect(lapseMails(w.techAll)).toHaveLength(1);

    // The next request to the organisation is refused, on either instance, until a just-in-time grant exists.
    const api = await fresh(w, w.techAll);
    expectError(await api.get(`/devices/${w.device.id}`), 404, 'not_found');
    expectError(await (await fresh(w, w.techAll, peer)).get(`/devices/${w.device.id}`), 404, 'not_found');
    expectError(await (await fresh(w, w.techSel)).get(`/devices/${w.device.id}`), 404, 'not_found');
    expectStatus(await (await fresh(w, w.admin)).get(`/devices/${w.device.id}`), 200);
    expectStatus(
      await api.post('/access/requests', {
        orgId: w.orgA.id,
        durationMinutes: 30,
        reason: 'Lapsed, needs the file server',
      }),
      201,
    );
    expectStatus(await api.get(`/devices/${w.device.id}`), 200);
  });

  it('a member idle long before the setting was switched on is warned first and lapses no sooner than 7 days later', async () => {
    const w = await world(null);
    t.clock.advance(100 * DAY);
    expectStatus(
      await (await fresh(w, w.admin)).patch('/orgs/partners/me', {
        settings: { security: { standingAccessLapseDays: 30 } },
      }),
      200,
    );
    await sweepBoth();
    expect(await membership(w, w.techAll)).toMatchObject({ orgAccess: 'all', lapseWarnedAt: expect.any(Date) });
    t.clock.advance(6 * DAY);
    await sweepBoth();
    expect((await membership(w, w.techAll)).orgAccess).toBe('all');
    t.clock.advance(DAY + 3_600_000);
    await sweepBoth();
    expect((await membership(w, w.techAll)).orgAccess).toBe('eligible');
  });

  it('a short period warns at its half', async () => {
    const w = await world(10);
    t.clock.advance(4 * DAY);
    await sweepBoth();
    expect((await membership(w, w.techSel)).lapseWarnedAt).toBeNull();
    t.clock.advance(DAY + 3_600_000);
    await sweepBoth();
    expect((await membership(w, w.techSel)).lapseWarnedAt).not.toBeNull();
    t.clock.advance(5 * DAY);
    await sweepBoth();
    expect((await membership(w, w.techSel)).orgAccess).toBe('eligible');
  });
});

describe('use resets the clock', () => {
  it('a sign-in or a refresh after the warning keeps standing access; the next idle period warns again', async () => {
    const w = await world(30);
    t.clock.advance(24 * DAY);
    await sweepBoth();
    const firstWarning = (await membership(w, w.techAll)).lapseWarnedAt!;
    expect(firstWarning).not.toBeNull();
    expect((await membership(w, w.techSel)).lapseWarnedAt).not.toBeNull();

    // techAll signs in; techSel's client refreshes its session.
    await signIn(t, w.techAll.user.email);
    const s = await sessionFor(
      t,
      w.techSel.user.id,
      { scope: 'partner', partnerId: w.partner.id, roleId: PARTNER_TECH },
      true,
    );
    expectStatus(await refresh(clientWithRefreshToken(t, s.refreshToken)), 200);

    t.clock.advance(8 * DAY);
    await sweepBoth();
    expect((await membership(w, w.techAll)).orgAccess).toBe('all');
    expect((await membership(w, w.techSel)).orgAccess).toBe('selected');
    expect(await auditRecords(t, 'access.lapse', w.techAll.user.id)).toHaveLength(0);
    expectStatus(await (await fresh(w, w.techAll)).get(`/devices/${w.device.id}`), 200);

    t.clock.advance(15.5 * DAY);
    await sweepBoth();
    const second = (await membership(w, w.techAll)).lapseWarnedAt!;
    expect(second.getTime()).toBeGreaterThan(firstWarning.getTime());
    await expect.poll(() => lapseMails(w.techAll).length).toBe(2);
  });
});
