// The authorization API as an attacker meets it: a second partner's service account asking about the first partner's
// people and devices learns nothing (its answers are byte for byte those about ids that do not exist); a service
// account without authz:evaluate, a person, and no credential are refused; malformed questions are 400 with their codes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { createRole } from '../support/access.js';
import { serviceAccountWithKey } from '../support/service-accounts.js';
import { PARTNER_VIEWER } from '../onboarding/helpers.js';
import { buildWorld, device, pdpOf, user, type World } from './world.js';

let t: TestApp;
let w: World;

beforeAll(async () => {
  t = await startApp();
  w = await buildWorld(t);
});
afterAll(async () => t?.close());

describe("a second partner's service account", () => {
  it("asking about partner a's device gets exactly the answer about a device that does not exist", async () => {
    const q = (id: string) => ({
      subject: user(w.a.tech.user.id),
      resource: device(id),
      action: { name: 'devices:read' },
    });
    const theirs = await w.pdpB.call('evaluation', q(w.devices[0]!.id));
    const none = await w.pdpB.call('evaluation', q(randomUUID()));
    expect(theirs.status).toBe(200);
    expect(theirs.body.decision).toBe(false);
    expect(theirs.text).toBe(none.text);
    // partner a's own caller gets the real answer
    expect((await w.pdpA.call('evaluation', q(w.devices[0]!.id))).body.decision).toBe(true);
  });

  it("asking about partner a's person on its own device gets exactly the answer about a person who does not exist", async () => {
    const q = (id: string) => ({
      subject: user(id),
      resource: device(w.foreignDevice.id),
      action: { name: 'devices:read' },
    });
    const theirs = await w.pdpB.call('evaluation', q(w.a.admin.user.id));
    const none = await w.pdpB.call('evaluation', q(randomUUID()));
    expect(theirs.body.decision).toBe(false);
    expect(theirs.text).toBe(none.text);
    // and about partner a's own service account
    const sa = await w.pdpB.call('evaluation', {
      ...q(w.callerA.account.id),
      subject: { type: 'service_account', id: w.callerA.account.id },
    });
    const noSa = await w.pdpB.call('evaluation', {
      ...q(randomUUID()),
      subject: { type: 'service_account', id: randomUUID() },
    });
    expect(sa.text).toBe(noSa.text);
  });

  it("batches and searches about partner a's records answer as about nothing", async () => {
    const batch = await w.pdpB.call('evaluations', {
      subject: user(w.a.tech.user.id),
      action: { name: 'devices:read' },
      evaluations: [{ resource: device(w.devices[0]!.id) }, { resource: device(randomUUID()) }],
    });
    expect(JSON.stringify(batch.body.evaluations[0])).toBe(JSON.stringify(batch.body.evaluations[1]));
    const subjects = await w.pdpB.call('subject', {
      subject: { type: 'user' },
      action: { name: 'devices:read' },
      resource: device(w.devices[0]!.id),
    });
    expect(subjects.status, subjects.text).toBe(200);
    expect(subjects.body.results).toEqual([]);
    const resources = await w.pdpB.call('resource', {
      subject: user(w.a.tech.user.id),
      action: { name: 'devices:read' },
      resource: { type: 'device' },
    });
    expect(resources.body.results).toEqual([]);
    const orgOfA = await w.pdpB.call('resource', {
      subject: user(w.b.tech.user.id),
      action: { name: 'devices:read' },
      resource: { type: 'device', properties: { organization_id: w.a.orgs[0].id } },
    });
    expect(orgOfA.body.results).toEqual([]);
    const actions = await w.pdpB.call('action', {
      subject: user(w.a.tech.user.id),
      resource: device(w.devices[0]!.id),
    });
    expect(actions.body.results).toEqual([]);
    const partner = await w.pdpB.call('evaluation', {
      subject: user(w.b.admin.user.id),
      resource: { type: 'partner', id: w.a.partner.id },
      action: { name: 'settings:read' },
    });
    expect(partner.body).toMatchObject({ decision: false, context: { error: { status: 404 } } });
  });
});

describe('callers that may not ask', () => {
  const body = () => ({
    subject: user(w.a.tech.user.id),
    resource: device(w.devices[0]!.id),
    action: { name: 'devices:read' },
  });

  it('a service account without authz:evaluate → 403 forbidden, on every endpoint', async () => {
    const plain = await serviceAccountWithKey(w.a.admin.api, { roleId: PARTNER_VIEWER });
    const pdp = pdpOf(t, plain.api);
    for (const path of ['evaluation', 'evaluations', 'subject', 'resource', 'action'] as const) {
      const res = await pdp.call(path, body());
      expect(res.status, `${path} ${res.text}`).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
  });

  it('a person, even a Partner Admin (*:*) → 403; no credential → 401', async () => {
    const res = await pdpOf(t, w.a.admin.api).call('evaluation', body());
    expect(res.status, res.text).toBe(403);
    const anon = await pdpOf(t, t.client()).call('evaluation', body());
    expect(anon.status).toBe(401);
  });

  it("an organisation's service account asks about its own organisation only", async () => {
    const role = await createRole(t, {
      owner: { kind: 'organization', orgId: w.a.orgs[0].id },
      permissions: ['authz:evaluate'],
    });
    const orgCaller = await serviceAccountWithKey(w.a.admin.api, { roleId: role.id, orgId: w.a.orgs[0].id });
    const pdp = pdpOf(t, orgCaller.api);
    const own = await pdp.call('evaluation', { ...body(), resource: device(w.devices[0]!.id) });
    expect(own.status, own.text).toBe(200);
    expect(own.body.decision).toBe(true);
    const other = await pdp.call('evaluation', { ...body(), resource: device(w.devices[3]!.id) });
    const none = await pdp.call('evaluation', { ...body(), resource: device(randomUUID()) });
    expect(other.text).toBe(none.text);
  });
});

describe('malformed questions → 400 with a catalogued code', () => {
  const ok = () => ({
    subject: user(w.a.tech.user.id),
    resource: device(w.devices[0]!.id),
    action: { name: 'devices:read' },
  });
  const cases: [string, () => unknown, string][] = [
    [
      'an unknown subject type (agent: agents are service accounts)',
      () => ({ ...ok(), subject: { type: 'agent', id: randomUUID() } }),
      'unknown_subject_type',
    ],
    [
      'an unknown resource type',
      () => ({ ...ok(), resource: { type: 'document', id: randomUUID() } }),
      'unknown_resource_type',
    ],
    ['an action outside the catalogue', () => ({ ...ok(), action: { name: 'can_read' } }), 'unknown_permission'],
    ['no subject', () => ({ resource: ok().resource, action: ok().action }), 'validation_failed'],
    [
      'an id that is not a UUID',
      () => ({ ...ok(), subject: { type: 'user', id: 'alice@example.com' } }),
      'validation_failed',
    ],
    ['a body that is not an object', () => [ok()], 'validation_failed'],
  ];
  for (const [label, make, code] of cases) {
    it(label, async () => {
      const res = await w.pdpA.call('evaluation', make());
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe(code);
    });
  }

  it('a batch entry missing a key with no default, an unknown semantic, more than 1,000 evaluations', async () => {
    const missing = await w.pdpA.call('evaluations', { evaluations: [{ resource: ok().resource }] });
    expect([missing.status, missing.body.code]).toEqual([400, 'validation_failed']);
    const semantic = await w.pdpA.call('evaluations', {
      ...ok(),
      evaluations: [{}],
      options: { evaluations_semantic: 'first' },
    });
    expect([semantic.status, semantic.body.code]).toEqual([400, 'validation_failed']);
    const many = await w.pdpA.call('evaluations', { ...ok(), evaluations: Array.from({ length: 1001 }, () => ({})) });
    expect([many.status, many.body.code]).toEqual([400, 'validation_failed']);
    const unknownInBatch = await w.pdpA.call('evaluations', {
      ...ok(),
      evaluations: [{}, { resource: { type: 'folder', id: randomUUID() } }],
    });
    expect([unknownInBatch.status, unknownInBatch.body.code]).toEqual([400, 'unknown_resource_type']);
  });

  it('invalid JSON → 400 validation_failed; a page token of another request → 400', async () => {
    const bad = await w.callerA.api.raw.post(`${t.baseUrl}/access/v1/evaluation`, undefined, {
      rawBody: '{"subject":',
      contentType: 'application/json',
    });
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
    const search = (orgId: string, token?: string) =>
      w.pdpA.call('resource', {
        subject: user(w.a.tech.user.id),
        action: { name: 'devices:read' },
        resource: { type: 'device', properties: { organization_id: orgId } },
        page: token ? { token } : { limit: 1 },
      });
    const first = await search(w.a.orgs[0].id);
    expect(first.body.page.next_token).not.toBe('');
    const moved = await search(w.a.orgs[1].id, first.body.page.next_token);
    expect([moved.status, moved.body.code]).toEqual([400, 'validation_failed']);
    const forged = await search(w.a.orgs[0].id, 'bm90LWEtdG9rZW4');
    expect(forged.status).toBe(400);
  });
});
