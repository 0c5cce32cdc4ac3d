// The blast-radius budgets behind the authorization API, acted out through HTTP on two instances over one database
// (and one Redis when REDIS_URL is set): a technician's budget crossed through evaluations, the same budget shared with
// the API's own routes, dry runs that never charge, a co-signature that unlocks exactly N evaluations, a batch counted
// as one use, and a second partner whose evaluations never touch the first partner's budgets.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import { createRole } from '../support/access.js';
import {
  auditRecords,
  createDevice,
  createOrg,
  createPartner,
  createSite,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { serviceAccountWithKey } from '../support/service-accounts.js';
import { expectError, expectStatus, PARTNER_ADMIN } from '../onboarding/helpers.js';
import { device, pdpOf, user, type Pdp } from './world.js';

let t: TestApp;
let peer: PeerApp;
beforeAll(async () => {
  t = await startApp();
  peer = await startPeer(t);
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
});

/** A partner with three customers (two devices each), two admins, a technician who may delete devices, and an evaluator. */
async function world() {
  const partner = await createPartner(t);
  const orgs = [];
  for (let i = 0; i < 3; i++) {
    const org = await createOrg(t, partner.id);
    const site = await createSite(t, org.id);
    orgs.push({ org, devices: [await createDevice(t, org, site.id), await createDevice(t, org, site.id)] });
  }
  const owner = { kind: 'partner' as const, partnerId: partner.id };
  const deleter = await createRole(t, { owner, permissions: ['organizations:read', 'devices:read', 'devices:delete'] });
  const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN, name: 'Ada Admin' });
  const admin2 = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN, name: 'Bo Second' });
  const tech = await signedInPartnerMember(t, partner.id, { roleId: deleter.id, name: 'Tess Tech' });
  const evaluator = await serviceAccountWithKey(admin.api, {
    roleId: (await createRole(t, { owner, permissions: ['authz:evaluate'] })).id,
  });
  const runner = await serviceAccountWithKey(admin.api, { roleId: deleter.id });
  const peerEvaluator = peer.client().withToken(evaluator.key.key);
  return {
    partner,
    orgs,
    devices: orgs.flatMap((o) => o.devices),
    admin,
    admin2,
    tech,
    runner,
    pdp: pdpOf(t, evaluator.api),
    pdpOnPeer: { call: (path, body) => peerEvaluator.raw.post(`${peer.baseUrl}/access/v1/${path}`, body) } as Pdp,
  };
}

async function setPartnerGovernor(admin: SignedInMember, governor: object) {
  expectStatus(await admin.api.patch('/orgs/partners/me', { settings: { governor } }), 200);
}

const ask = (subject: object, deviceId: string, action = 'devices:delete', context?: object) => ({
  subject,
  resource: device(deviceId),
  action: { name: action },
  ...(context ? { context } : {}),
});

async function evaluate(pdp: Pdp, body: object) {
  return expectStatus(await pdp.call('evaluation', body), 200).body;
}

const budgetStep = (answer: { context: { reasons: { step: string }[] } }) =>
  answer.context.reasons.find((r) => r.step === 'budget');

/** Records written once the answer is sent: wait for them. */
async function eventually<T>(read: () => Promise<T[]>, n = 1): Promise<T[]> {
  for (let i = 0; i < 50; i++) {
    const rows = await read();
    if (rows.length >= n) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
  return read();
}

describe("a technician's budget crossed through evaluations", () => {
  it('the third organisation answers decision false with requires step_up, as the route then refuses', async () => {
    const w = await world();
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 10, maxOrganizations: 2 } });
    const tess = user(w.tech.user.id);
    const first = await evaluate(w.pdp, ask(tess, w.orgs[0]!.devices[0]!.id));
    expect(first.decision).toBe(true);
    expect(budgetStep(first)).toMatchObject({ allowed: true, budget: { dimension: 'organizations', used: 1 } });
    expect((await evaluate(w.pdp, ask(tess, w.orgs[1]!.devices[0]!.id))).decision).toBe(true);
    const third = await evaluate(w.pdp, ask(tess, w.orgs[2]!.devices[0]!.id));
    expect(third).toMatchObject({ decision: false, context: { denied_by: 'budget', requires: 'step_up' } });
    expect(budgetStep(third)).toMatchObject({
      allowed: false,
      requires: 'step_up',
      budget: { setBy: 'partner', dimension: 'organizations', limit: 2, used: 3 },
    });
    // Reading is not metered; an organisation already touched stays within the budget.
    const read = await evaluate(w.pdp, ask(tess, w.orgs[2]!.devices[0]!.id, 'devices:read'));
    expect(read.decision).toBe(true);
    expect(budgetStep(read)).toBeUndefined();
    expect((await evaluate(w.pdp, ask(tess, w.orgs[0]!.devices[1]!.id))).decision).toBe(true);
    // The technician's own request meets the same budget, with the same words.
    const route = await w.tech.api.delete(`/devices/${w.orgs[2]!.devices[0]!.id}`);
    expectError(route, 403, 'budget_exceeded');
    expect(route.body.budget).toMatchObject({ dimension: 'organizations', limit: 2, used: 3 });
    // The trip is audited, charged to the technician.
    const trips = await eventually(() => auditRecords(t, 'governor.budget.exceeded', w.tech.user.id), 2);
    expect(trips[0]!.details).toMatchObject({ subject: { type: 'user', id: w.tech.user.id } });
  });
});

describe('one budget for routes and evaluations, on every instance', () => {
  it('a route use then evaluations on the second instance cross the devices budget together', async () => {
    const w = await world();
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 10, maxDevices: 2 } });
    expectStatus(await w.tech.api.delete(`/devices/${w.devices[0]!.id}`), 200);
    const tess = user(w.tech.user.id);
    const second = await evaluate(w.pdpOnPeer, ask(tess, w.devices[1]!.id));
    expect(second.decision).toBe(true);
    expect(budgetStep(second)).toMatchObject({ budget: { dimension: 'devices', used: 2 } });
    const third = await evaluate(w.pdpOnPeer, ask(tess, w.devices[2]!.id));
    expect(third.context).toMatchObject({ denied_by: 'budget', requires: 'step_up' });
    // And back on the first instance, the route is refused too.
    expectError(await w.tech.api.delete(`/devices/${w.devices[3]!.id}`), 403, 'budget_exceeded');
  });
});

describe('dry_run only asks', () => {
  it('never charges, at the top level or per evaluation, and says what a real one would meet', async () => {
    const w = await world();
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 10, maxDestructive: 1 } });
    const tess = user(w.tech.user.id);
    for (let i = 0; i < 3; i++) {
      const dry = await evaluate(w.pdp, ask(tess, w.devices[i]!.id, 'devices:delete', { dry_run: true }));
      expect(dry.decision).toBe(true);
      expect(budgetStep(dry)).toMatchObject({ allowed: true, budget: { dimension: 'destructive', used: 1 } });
    }
    const batch = expectStatus(
      await w.pdp.call('evaluations', {
        subject: tess,
        action: { name: 'devices:delete' },
        context: { dry_run: true },
        evaluations: [{ resource: device(w.devices[0]!.id) }, { resource: device(w.devices[4]!.id) }],
      }),
      200,
    ).body;
    expect(batch.evaluations.map((e: { decision: boolean }) => e.decision)).toEqual([true, true]);
    const entry = expectStatus(
      await w.pdp.call('evaluations', {
        subject: tess,
        action: { name: 'devices:delete' },
        evaluations: [{ resource: device(w.devices[5]!.id), context: { dry_run: true } }],
      }),
      200,
    ).body;
    expect(entry.evaluations[0].decision).toBe(true);
    // Nothing was charged: the one real use still passes, and a dry run after it says the next is over.
    expect((await evaluate(w.pdp, ask(tess, w.devices[0]!.id))).decision).toBe(true);
    const after = await evaluate(w.pdp, ask(tess, w.devices[1]!.id, 'devices:delete', { dry_run: true }));
    expect(after).toMatchObject({ decision: false, context: { denied_by: 'budget', requires: 'step_up' } });
    expect(budgetStep(after)).toMatchObject({ budget: { used: 2, limit: 1 } });
    // A dry_run that is not a boolean is refused.
    expectError(
      await w.pdp.call('evaluation', ask(tess, w.devices[1]!.id, 'devices:delete', { dry_run: 'yes' })),
      400,
      'validation_failed',
    );
  });
});

describe('a batch is one use of destructive permissions, each device one device', () => {
  it('three devices in one batch are one use; what a batch does not answer is not charged', async () => {
    const w = await world();
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 10, maxDestructive: 2, maxDevices: 4 } });
    const tess = user(w.tech.user.id);
    const batch = (ids: string[], options?: object) =>
      w.pdp.call('evaluations', {
        subject: tess,
        action: { name: 'devices:delete' },
        evaluations: ids.map((id) => ({ resource: device(id) })),
        ...(options ? { options } : {}),
      });
    const first = expectStatus(await batch([0, 1, 2].map((i) => w.devices[i]!.id)), 200).body;
    expect(first.evaluations.map((e: { decision: boolean }) => e.decision)).toEqual([true, true, true]);
    expect(budgetStep(first.evaluations[2])).toMatchObject({ budget: { dimension: 'devices', used: 3 } });
    // Stopped at its first deny (a record that does not exist), the batch charges nothing after it.
    const stopped = expectStatus(
      await batch([randomUUID(), w.devices[3]!.id], { evaluations_semantic: 'deny_on_first_deny' }),
      200,
    ).body;
    expect(stopped.evaluations).toHaveLength(1);
    // So the second use is this one, on the fourth device; the next use is over.
    const second = await evaluate(w.pdp, ask(tess, w.devices[3]!.id));
    expect(second.decision).toBe(true);
    expect(budgetStep(second)).toMatchObject({ budget: { dimension: 'devices', used: 4, limit: 4 } });
    const third = await evaluate(w.pdp, ask(tess, w.devices[0]!.id));
    expect(third.context).toMatchObject({ denied_by: 'budget', requires: 'step_up' });
    expect(budgetStep(third)).toMatchObject({ budget: { dimension: 'destructive', used: 3, limit: 2 } });
  });
});

describe('a co-signature unlocks exactly N evaluations', () => {
  it("a script runner over budget needs a co-signature; another admin's approval lets exactly two through", async () => {
    const w = await world();
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 10, maxDestructive: 1 }, coSign: { actions: 2 } });
    const runner = { type: 'service_account', id: w.runner.account.id };
    const one = { ...ask(runner, w.devices[0]!.id) };
    expect((await evaluate(w.pdp, one)).decision).toBe(true);
    const over = await evaluate(w.pdp, ask(runner, w.devices[1]!.id));
    expect(over).toMatchObject({ decision: false, context: { denied_by: 'budget', requires: 'co_sign' } });
    const req = expectStatus(await w.runner.api.post('/governor/co-signs', { reason: 'Nightly cleanup' }), 201);
    expect((await evaluate(w.pdp, ask(runner, w.devices[1]!.id))).decision).toBe(false);
    expectStatus(await w.admin2.api.post(`/governor/co-signs/${req.body.id}/approve`), 200);
    // A dry run spends nothing of it.
    const dry = await evaluate(w.pdp, ask(runner, w.devices[1]!.id, 'devices:delete', { dry_run: true }));
    expect(dry.decision).toBe(false);
    const a = await evaluate(w.pdpOnPeer, ask(runner, w.devices[1]!.id));
    expect(a.decision).toBe(true);
    expect(budgetStep(a)).toMatchObject({ allowed: true, requires: 'co_sign' });
    expect((await evaluate(w.pdp, ask(runner, w.devices[2]!.id))).decision).toBe(true);
    expect((await evaluate(w.pdp, ask(runner, w.devices[3]!.id))).context.requires).toBe('co_sign');
    const used = await eventually(() => auditRecords(t, 'governor.co_sign.use', req.body.id), 2);
    expect(used).toHaveLength(2);
    expect(used[0]!.details).toMatchObject({ subject: { type: 'service_account', id: w.runner.account.id } });
  });
});

describe('another partner', () => {
  it("never charges the first partner's technician, and learns nothing about it", async () => {
    const w = await world();
    const other = await world();
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 10, maxDestructive: 1 } });
    const tess = user(w.tech.user.id);
    for (let i = 0; i < 3; i++) {
      const foreign = await evaluate(other.pdp, ask(tess, w.devices[i]!.id));
      expect(foreign).toEqual({
        decision: false,
        context: { epoch: foreign.context.epoch, reasons: [], error: { status: 404, message: expect.any(String) } },
      });
      const own = await evaluate(other.pdp, ask(tess, other.devices[i]!.id));
      expect(own).toMatchObject({ decision: false, context: { denied_by: 'membership' } });
      expect(own.context.requires).toBeUndefined();
    }
    // The technician's one use is still whole.
    const mine = await evaluate(w.pdp, ask(tess, w.devices[0]!.id));
    expect(mine.decision).toBe(true);
    expect(budgetStep(mine)).toMatchObject({ budget: { used: 1, limit: 1 } });
  });
});

describe('a freeze answers before any budget', () => {
  it("a partner's freeze refuses the technician's evaluation without charging it; lifted, the budget is whole", async () => {
    const w = await world();
    await setPartnerGovernor(w.admin, { budget: { windowMinutes: 10, maxDestructive: 1 } });
    const tess = user(w.tech.user.id);
    expectStatus(await w.admin.api.post('/orgs/partners/me/freeze', { reason: 'Suspected key leak' }), 200);
    const frozen = await evaluate(w.pdpOnPeer, ask(tess, w.devices[0]!.id));
    expect(frozen).toMatchObject({ decision: false, context: { denied_by: 'freeze' } });
    expect(budgetStep(frozen)).toBeUndefined();
    expectStatus(await w.admin.api.delete('/orgs/partners/me/freeze'), 200);
    const lifted = await evaluate(w.pdpOnPeer, ask(tess, w.devices[0]!.id));
    expect(lifted.decision).toBe(true);
    expect(budgetStep(lifted)).toMatchObject({ budget: { used: 1, limit: 1 } });
  });
});
