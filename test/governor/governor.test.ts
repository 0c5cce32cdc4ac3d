// The blast-radius governor through HTTP, on two instances over one database (and one Redis when REDIS_URL is set):
// budgets counted across instances, the organisation's stricter budget, co-signatures that unlock exactly N actions,
// freezes that stop the next decision of a service account and of a person, break-glass past a freeze, and a second
// partner that can neither freeze, lift nor co-sign for the first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import { createRole } from '../support/access.js';
import type { ApiClient } from '../support/client.js';
import {
  auditRecords,
  createDevice,
  createOrg,
  createPartner,
  createSite,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { serviceAccountWithKey } from '../support/service-accounts.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { expectError, expectStatus, ORG_ADMIN, PARTNER_ADMIN } from '../onboarding/helpers.js';
import { member, PASSWORD, registerPasskey, signIn } from '../mfa/helpers.js';
import { getAssertion } from '../support/webauthn.js';

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

/** The same bearer credential sent to the second instance. */
const onPeer = (token: string) => peer.client().withToken(token);

/** A partner with three customers (two devices each), an admin, a second admin and a technician who may delete devices. */
async function world() {
  const partner = await createPartner(t);
  const orgs = [];
  for (let i = 0; i < 3; i++) {
    const org = await createOrg(t, partner.id);
    const site = await createSite(t, org.id);
    orgs.push({ org, devices: [await createDevice(t, org, site.id), await createDevice(t, org, site.id)] });
  }
  const techRole = await createRole(t, {
    owner: { kind: 'partner', partnerId: partner.id },
    permissions: ['organizations:read', 'devices:read', 'devices:delete'],
  });
  const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN, name: 'Ada Admin' });
  const admin2 = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN, name: 'Bo Second' });
  const tech = await signedInPartnerMember(t, partner.id, { roleId: techRole.id, name: 'Tess Tech' });
  return { partner, orgs, techRole, admin, admin2, tech };
}

async function setPartnerGovernor(admin: SignedInMember, governor: object) {
  expectStatus(await admin.api.patch('/orgs/partners/me', { settings: { governor } }), 200);
}

const deleteDevice = (api: ApiClient, id: string, headers?: Record<string, string>) =>
  api.delete(`/devices/${id}`, headers ? { headers } : undefined);

/** Records written once the answer is sent: wait for them. */
async function eventually<T>(read: () => Promise<T[]>, n = 1): Promise<T[]> {
  for (let i = 0; i < 50; i++) {
    const rows = await read();
    if (rows.length >= n) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
  return read();
}

describe('a budget is counted across instances', () => {
  it('a technician crossing the organisations budget on instance A is refused on instance B', async () => {
    const w = await world();
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 10, maxOrganizations: 2 } });
    expectStatus(await deleteDevice(w.tech.api, w.orgs[0]!.devices[0]!.id), 200);
    expectStatus(await deleteDevice(w.tech.api, w.orgs[1]!.devices[0]!.id), 200);
    // Another device in an organisation already touched: still two organisations.
    expectStatus(await deleteDevice(onPeer(w.tech.session.accessToken), w.orgs[1]!.devices[1]!.id), 200);
    const third = await deleteDevice(onPeer(w.tech.session.accessToken), w.orgs[2]!.devices[0]!.id);
    expectError(third, 403, 'budget_exceeded');
    expect(third.body.requires).toBe('step_up');
    expect(third.body.budget).toMatchObject({ setBy: 'partner', dimension: 'organizations', limit: 2, used: 3 });
    // Refused means not done, on either instance.
    expectStatus(await w.admin.api.get(`/devices/${w.orgs[2]!.devices[0]!.id}`), 200);
    expectError(await deleteDevice(w.tech.api, w.orgs[2]!.devices[0]!.id), 403, 'budget_exceeded');
    // Reading is not metered.
    expectStatus(await w.tech.api.get(`/devices/${w.orgs[2]!.devices[1]!.id}`), 200);
    const trips = await eventually(() => auditRecords(t, 'governor.budget.exceeded', w.tech.user.id), 2);
    expect(trips[0]).toMatchObject({ result: 'denied', orgId: w.orgs[2]!.org.id });
  });

  it('the window slides: once it has passed, the budget is whole again', async () => {
    const w = await world();
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 5, maxDestructive: 1 } });
    expectStatus(await deleteDevice(w.tech.api, w.orgs[0]!.devices[0]!.id), 200);
    expectError(await deleteDevice(w.tech.api, w.orgs[0]!.devices[1]!.id), 403, 'budget_exceeded');
    t.clock.advance(5 * 60_000 + 1000);
    expectStatus(await deleteDevice(onPeer(w.tech.session.accessToken), w.orgs[0]!.devices[1]!.id), 200);
  });

  it('no budget by default: nothing is metered', async () => {
    const w = await world();
    for (const { devices } of w.orgs) expectStatus(await deleteDevice(w.tech.api, devices[0]!.id), 200);
  });

  it('budgets are validated', async () => {
    const w = await world();
    const bad = await w.admin.api.patch('/orgs/partners/me', {
      settings: { governor: { budget: { windowMinutes: 0, maxDevices: 5 } } },
    });
    expectError(bad, 400, 'validation_failed');
    const none = await w.admin.api.patch('/orgs/partners/me', {
      settings: { governor: { budget: { windowMinutes: 5 } } },
    });
    expectError(none, 400, 'validation_failed');
  });
});

describe('a fresh phishing-resistant step-up unlocks', () => {
  it('over budget, a password step-up does not unlock; a passkey step-up does, and the pass is audited', async () => {
    const w = await world();
    // A window longer than the step-up's freshness, so the proof ages out before the window does.
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 120, maxDestructive: 1 } });
    const m = await member(t, { kind: 'partner', partnerId: w.partner.id, roleId: w.techRole.id });
    const api = await signIn(t, m.email);
    const { credential } = await registerPasskey(t, api, 'Laptop');
    const [d0, d1] = w.orgs[0]!.devices;
    expectStatus(await deleteDevice(api, d0!.id), 200);
    const over = await deleteDevice(api, d1!.id);
    expectError(over, 403, 'budget_exceeded');
    expect(over.body.requires).toBe('step_up');
    const byPassword = expectStatus(await api.post('/auth/step-up', { password: PASSWORD }), 200);
    api.token = byPassword.body.accessToken;
    expectError(await deleteDevice(api, d1!.id), 403, 'budget_exceeded');
    const options = expectStatus(await api.post('/auth/step-up/options'), 200);
    const byKey = await api.post('/auth/step-up', {
      credential: getAssertion(options.body.options, t.deps.config.appUrl, credential),
    });
    api.token = expectStatus(byKey, 200).body.accessToken;
    expectStatus(await onPeer(api.token!).delete(`/devices/${d1!.id}`), 200);
    expect(await eventually(() => auditRecords(t, 'governor.budget.step_up', m.user.id))).toHaveLength(1);
    // The proof ages out: over budget again.
    t.clock.advance(t.deps.config.stepUpMaxAge * 1000 + 1000);
    expectError(await deleteDevice(api, w.orgs[1]!.devices[0]!.id), 403, 'budget_exceeded');
  });
});

describe("the customer's stricter budget wins", () => {
  it("an organisation's own budget refuses before its partner's, and only its own admins set it", async () => {
    const w = await world();
    const [a] = w.orgs;
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 10, maxDevices: 50 } });
    const body = { settings: { governor: { budget: { windowMinutes: 10, maxDevices: 1 } } } };
    // The partner cannot set (or loosen) the customer's budget.
    expectError(await w.admin.api.patch(`/orgs/organizations/${a!.org.id}`, body), 403, 'budget_customer_only');
    const orgAdmin = await signedInOrgMember(t, a!.org, { roleId: ORG_ADMIN });
    expectStatus(await orgAdmin.api.patch(`/orgs/organizations/${a!.org.id}`, body), 200);
    expectStatus(await deleteDevice(w.tech.api, a!.devices[0]!.id), 200);
    const second = await deleteDevice(onPeer(w.tech.session.accessToken), a!.devices[1]!.id);
    expectError(second, 403, 'budget_exceeded');
    expect(second.body.budget).toMatchObject({ setBy: 'organization', dimension: 'devices', limit: 1 });
    // Elsewhere only the partner's (looser) budget holds.
    expectStatus(await deleteDevice(w.tech.api, w.orgs[1]!.devices[0]!.id), 200);
  });
});

describe('a co-signature unlocks exactly the next N actions', () => {
  it('another Partner Admin approves; N over-budget actions pass, the next is refused again', async () => {
    const w = await world();
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 10, maxDestructive: 1 }, coSign: { actions: 2 } });
    const devices = w.orgs.flatMap((o) => o.devices);
    expectStatus(await deleteDevice(w.tech.api, devices[0]!.id), 200);
    expectError(await deleteDevice(w.tech.api, devices[1]!.id), 403, 'budget_exceeded');
    const req = expectStatus(await w.tech.api.post('/governor/co-signs', { reason: 'Mass patch rollback' }), 201);
    expect(req.body).toMatchObject({ status: 'pending', actions: 2, remaining: 2, principalName: 'Tess Tech' });
    // Still refused until approved.
    expectError(await deleteDevice(w.tech.api, devices[1]!.id), 403, 'budget_exceeded');
    // The technician cannot approve (no settings:write); an admin cannot approve their own request.
    expectError(await w.tech.api.post(`/governor/co-signs/${req.body.id}/approve`), 403, 'forbidden');
    const own = expectStatus(await w.admin.api.post('/governor/co-signs', { reason: 'mine' }), 201);
    expectError(await w.admin.api.post(`/governor/co-signs/${own.body.id}/approve`), 403, 'co_sign_not_allowed');
    const pending = expectStatus(await w.admin2.api.get('/governor/co-signs', { query: { status: 'pending' } }), 200);
    expect(pending.body.data.map((r: { id: string }) => r.id)).toContain(req.body.id);
    const ok = expectStatus(await w.admin2.api.post(`/governor/co-signs/${req.body.id}/approve`), 200);
    expect(ok.body).toMatchObject({ status: 'approved', approvedByName: 'Bo Second' });
    expectError(await w.admin.api.post(`/governor/co-signs/${req.body.id}/approve`), 409, 'co_sign_closed');
    // Exactly two, on either instance.
    expectStatus(await deleteDevice(onPeer(w.tech.session.accessToken), devices[1]!.id), 200);
    expectStatus(await deleteDevice(w.tech.api, devices[2]!.id), 200);
    expectError(await deleteDevice(w.tech.api, devices[3]!.id), 403, 'budget_exceeded');
    const mine = expectStatus(await w.tech.api.get('/governor/co-signs'), 200);
    expect(mine.body.data).toEqual([expect.objectContaining({ id: req.body.id, status: 'used', remaining: 0 })]);
    expect(await eventually(() => auditRecords(t, 'governor.co_sign.use', req.body.id), 2)).toHaveLength(2);
    expect(await auditRecords(t, 'governor.co_sign.approve', req.body.id)).toHaveLength(1);
  });

  it('a request not approved in time closes', async () => {
    const w = await world();
    await setPartnerGovernor(w.admin, { coSign: { minutes: 5 } });
    const req = expectStatus(await w.tech.api.post('/governor/co-signs', { reason: 'later' }), 201);
    t.clock.advance(5 * 60_000 + 1000);
    expectError(await w.admin2.api.post(`/governor/co-signs/${req.body.id}/approve`), 409, 'co_sign_closed');
  });
});

describe('a freeze stops the next decision', () => {
  it("a partner's freeze stops its service account on every instance; reading goes on; lifting it restores", async () => {
    const w = await world();
    const sa = await serviceAccountWithKey(w.admin.api, { roleId: w.techRole.id });
    const [d0, d1] = w.orgs[0]!.devices;
    const before = expectStatus(await w.admin.api.get('/governor'), 200);
    expect(before.body.freeze).toBeNull();
    const frozen = expectStatus(
      await w.admin.api.post('/orgs/partners/me/freeze', { reason: 'Suspected key leak' }),
      200,
    );
    expect(frozen.body).toMatchObject({ frozen: true, freeze: { side: 'partner', byName: 'Ada Admin' } });
    expectError(await w.admin.api.post('/orgs/partners/me/freeze', { reason: 'again' }), 409, 'already_frozen');
    const refused = await onPeer(sa.key.key).delete(`/devices/${d0!.id}`);
    expectError(refused, 403, 'frozen');
    expect(refused.body.freeze).toMatchObject({ side: 'partner', reason: 'Suspected key leak' });
    expectError(await sa.api.delete(`/devices/${d0!.id}`), 403, 'frozen');
    expectStatus(await sa.api.get(`/devices/${d0!.id}`), 200);
    // People too, the admins included.
    expectError(await deleteDevice(w.tech.api, d1!.id), 403, 'frozen');
    expectError(await deleteDevice(w.admin.api, d1!.id), 403, 'frozen');
    expectStatus(await onPeer(w.admin.session.accessToken).delete('/orgs/partners/me/freeze'), 200);
    expectStatus(await sa.api.delete(`/devices/${d0!.id}`), 200);
    expect(await auditRecords(t, 'governor.freeze', w.partner.id)).toHaveLength(1);
    expect(await auditRecords(t, 'governor.unfreeze', w.partner.id)).toHaveLength(1);
    // Mailed to both sides: the partner's admins and its customers' admins.
    const customer = await signedInOrgMember(t, w.orgs[1]!.org, { roleId: ORG_ADMIN });
    expectStatus(await w.admin.api.post('/orgs/partners/me/freeze', { reason: 'Second drill' }), 200);
    for (const to of [w.admin2.user.email, customer.user.email]) {
      const m = await mail.waitFor(to, (x) => x.text.includes('Second drill'));
      expect(m.subject).toMatch(/^Destructive actions are frozen/);
    }
  });

  it("an organisation's freeze holds the partner's staff and its own members there; only its side lifts it", async () => {
    const w = await world();
    const [a, b] = w.orgs;
    const orgAdmin = await signedInOrgMember(t, a!.org, { roleId: ORG_ADMIN, name: 'Olga Owner' });
    const res = expectStatus(
      await orgAdmin.api.post(`/orgs/organizations/${a!.org.id}/freeze`, { reason: 'Ransomware alert' }),
      200,
    );
    expect(res.body.freeze).toMatchObject({ side: 'organization', byName: 'Olga Owner' });
    // Mailed to both sides: the partner's admins learn of their customer's freeze, with its reason.
    for (const to of [w.admin.user.email, orgAdmin.user.email]) {
      const m = await mail.waitFor(to, (x) => x.text.includes('Ransomware alert'));
      expect(m.subject).toMatch(/^Destructive actions are frozen/);
    }
    expectError(await deleteDevice(onPeer(w.tech.session.accessToken), a!.devices[0]!.id), 403, 'frozen');
    expectError(await deleteDevice(orgAdmin.api, a!.devices[0]!.id), 403, 'frozen');
    // Other organisations are not frozen.
    expectStatus(await deleteDevice(w.tech.api, b!.devices[0]!.id), 200);
    // The customer sees it in its partner view; the partner sees it in its governor view.
    const view = expectStatus(await orgAdmin.api.get(`/orgs/organizations/${a!.org.id}/partner-access`), 200);
    expect(view.body.freezes).toMatchObject({ partner: null, organization: { side: 'organization' } });
    const gov = expectStatus(await w.admin.api.get('/governor'), 200);
    expect(gov.body.frozenOrganizations).toEqual([expect.objectContaining({ id: a!.org.id, name: a!.org.name })]);
    // The partner cannot lift the customer's freeze.
    expectError(await w.admin.api.delete(`/orgs/organizations/${a!.org.id}/freeze`), 403, 'freeze_other_side');
    expectStatus(await orgAdmin.api.delete(`/orgs/organizations/${a!.org.id}/freeze`), 200);
    expectStatus(await deleteDevice(w.tech.api, a!.devices[0]!.id), 200);
  });

  it('explain shows the freeze step', async () => {
    const w = await world();
    const d = w.orgs[0]!.devices[0]!;
    expectStatus(await w.admin.api.post('/orgs/partners/me/freeze', { reason: 'Drill' }), 200);
    const q = { userId: w.tech.user.id, permission: 'devices:delete', resourceType: 'device', resourceId: d.id };
    const res = expectStatus(await w.admin.api.get('/access/explain', { query: q }), 200);
    expect(res.body).toMatchObject({ allowed: false, deniedBy: 'freeze' });
    expect(res.body.reasons.find((r: { step: string }) => r.step === 'freeze')?.freeze).toMatchObject({
      reason: 'Drill',
    });
    const read = expectStatus(
      await w.admin.api.get('/access/explain', { query: { ...q, permission: 'devices:read' } }),
      200,
    );
    expect(read.body.allowed).toBe(true);
  });

  it('break-glass passes a freeze, only with a stated reason, and the use is audited', async () => {
    const w = await world();
    const glass = await signedInPartnerMember(t, w.partner.id, { roleId: PARTNER_ADMIN });
    expectStatus(
      await w.admin.api.patch('/orgs/partners/me', { settings: { security: { breakGlassUserId: glass.user.id } } }),
      200,
    );
    expectStatus(await w.admin.api.post('/orgs/partners/me/freeze', { reason: 'Incident 42' }), 200);
    const d = w.orgs[0]!.devices[0]!;
    expectError(await deleteDevice(glass.api, d.id), 403, 'frozen');
    expectStatus(await deleteDevice(glass.api, d.id, { 'x-break-glass-reason': 'Containing incident 42' }), 200);
    const used = await eventually(() => auditRecords(t, 'access.break_glass', w.partner.id));
    expect(used[0]!.details).toMatchObject({ exempted: 'freeze', reason: 'Containing incident 42' });
  });
});

describe('a second partner cannot freeze, lift or co-sign for the first', () => {
  it('every attempt is 404 or touches only its own partner', async () => {
    const w = await world();
    const other = await signedInPartnerMember(t, (await createPartner(t)).id, { roleId: PARTNER_ADMIN });
    const orgA = w.orgs[0]!.org.id;
    expectError(await other.api.post(`/orgs/organizations/${orgA}/freeze`, { reason: 'hostile' }), 404, 'not_found');
    expectStatus(await w.admin.api.post(`/orgs/organizations/${orgA}/freeze`, { reason: 'ours' }), 200);
    expectError(await other.api.delete(`/orgs/organizations/${orgA}/freeze`), 404, 'not_found');
    expectStatus(await w.admin.api.post('/orgs/partners/me/freeze', { reason: 'ours too' }), 200);
    // "me" is always the caller's own partner: the other partner's thaw lifts nothing here.
    expectStatus(await other.api.delete('/orgs/partners/me/freeze'), 200);
    expect(expectStatus(await w.admin.api.get('/governor'), 200).body.freeze).toMatchObject({ reason: 'ours too' });
    expectError(await deleteDevice(w.tech.api, w.orgs[1]!.devices[0]!.id), 403, 'frozen');
    const req = expectStatus(await w.tech.api.post('/governor/co-signs', { reason: 'please' }), 201);
    expectError(await other.api.post(`/governor/co-signs/${req.body.id}/approve`), 404, 'not_found');
    const theirs = expectStatus(await other.api.get('/governor/co-signs'), 200);
    expect(theirs.body.data).toEqual([]);
  });
});
