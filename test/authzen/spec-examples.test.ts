// Every request and response example of the AuthZEN Authorization API 1.0, mapped onto Gatehouse: `alice@example.com`
// is a Partner Technician of partner a (devices:execute, orgAccess all) or an organisation viewer restricted to a
// site, documents and accounts are devices, `can_read` is devices:read, `can_edit` devices:write. Each answer is
// what the spec's example shows, carried by Gatehouse's decision (reasons and epoch in `context`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { signedInOrgMember } from '../support/fixtures.js';
import { ORG_VIEWER } from '../onboarding/helpers.js';
import { buildWorld, device, user, type World } from './world.js';

let t: TestApp;
let w: World;
/** A viewer of a's first organisation restricted to site s1: reads devices 0 and 2, not device 1. */
let viewer: string;
let alice: string;

beforeAll(async () => {
  t = await startApp();
  w = await buildWorld(t);
  alice = w.a.tech.user.id;
  viewer = (await signedInOrgMember(t, w.a.orgs[0], { roleId: ORG_VIEWER, siteIds: [w.sites[0]!.id] })).user.id;
});
afterAll(async () => t?.close());

const decisions = (body: { evaluations: { decision: boolean }[] }) => body.evaluations.map((e) => e.decision);

describe('Information model examples', () => {
  it('a minimal subject, and subjects with a department, an IP address and a device id, are each evaluated', async () => {
    for (const properties of [
      undefined,
      { department: 'Sales' },
      { ip_address: '172.217.22.14', device_id: '8:65:ee:17:7e:0b' },
    ]) {
      const res = await w.pdpA.call('evaluation', {
        subject: user(alice, properties),
        resource: device(w.devices[0]!.id),
        action: { name: 'devices:read' },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.decision).toBe(true);
      expect(res.body.context.reasons.map((r: { step: string }) => r.step)).toEqual(
        expect.arrayContaining(['account', 'membership', 'role', 'organization_access']),
      );
      expect(Number.isInteger(res.body.context.epoch)).toBe(true);
    }
  });

  it('a resource with a structured property, an action with properties and a context with a schema are accepted', async () => {
    const res = await w.pdpA.call('evaluation', {
      subject: user(alice),
      resource: {
        ...device(w.devices[0]!.id),
        properties: { library_record: { title: 'AuthZEN in Action', isbn: '978-0593383322' } },
      },
      action: { name: 'devices:write', properties: { period: '2W' } },
      context: { time: '1985-10-26T01:22-07:00', schema: 'https://schema.example.com/access-request.schema.json' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.decision).toBe(true);
  });

  it('a denied decision carries the reason chain naming the step that denies (the spec’s reason context)', async () => {
    const res = await w.pdpA.call('evaluation', {
      subject: user(alice),
      resource: device(w.devices[0]!.id),
      action: { name: 'devices:delete' },
    });
    expect(res.body.decision).toBe(false);
    expect(res.body.context.denied_by).toBe('role');
    expect(res.body.context.reasons.find((r: { allowed: boolean }) => !r.allowed).detail).toMatch(/devices:delete/);
  });
});

describe('Access Evaluation API example', () => {
  it('the example request (subject, resource, action with properties, context) answers a Decision; X-Request-ID is echoed', async () => {
    const res = await w.pdpA.call(
      'evaluation',
      {
        subject: user(alice),
        resource: device(w.devices[1]!.id),
        action: { name: 'devices:read', properties: { method: 'GET' } },
        context: { time: '1985-10-26T01:22-07:00' },
      },
      { 'x-request-id': 'bfe9eb29-ab87-4ca3-be83-a1d5d8305716' },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBe('bfe9eb29-ab87-4ca3-be83-a1d5d8305716');
    expect(res.body).toMatchObject({ decision: true, context: { epoch: expect.any(Number) } });
  });
});

describe('Access Evaluations API examples', () => {
  it('three requests with no default values', async () => {
    const entry = (id: string) => ({
      subject: user(viewer),
      action: { name: 'devices:read' },
      resource: device(id),
      context: { time: '2024-05-31T15:22-07:00' },
    });
    const res = await w.pdpA.call('evaluations', { evaluations: w.devices.slice(0, 3).map((d) => entry(d.id)) });
    expect(res.status, res.text).toBe(200);
    expect(decisions(res.body)).toEqual([true, false, true]);
    expect(res.body.evaluations[1].context.denied_by).toBe('site');
  });

  it('defaults for subject and context; a default action overridden by the third request', async () => {
    const res = await w.pdpA.call('evaluations', {
      subject: user(viewer),
      context: { time: '2024-05-31T15:22-07:00' },
      action: { name: 'devices:read' },
      evaluations: [
        { resource: device(w.devices[0]!.id) },
        { resource: device(w.devices[2]!.id) },
        { action: { name: 'devices:write' }, resource: device(w.devices[2]!.id) },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(decisions(res.body)).toEqual([true, true, false]);
    expect(res.body.evaluations[2].context.denied_by).toBe('role');
  });

  it('the options object with an unknown option alongside evaluations_semantic', async () => {
    const res = await w.pdpA.call('evaluations', {
      evaluations: [{ resource: device(w.devices[0]!.id), subject: user(alice) }],
      action: { name: 'devices:read' },
      options: { evaluations_semantic: 'execute_all', another_option: 'value' },
    });
    expect(res.status, res.text).toBe(200);
    expect(decisions(res.body)).toEqual([true]);
  });

  const three = (semantic: string) => ({
    subject: user(viewer),
    action: { name: 'devices:read' },
    options: { evaluations_semantic: semantic },
    evaluations: [0, 1, 2].map((i) => ({ resource: device(w.devices[i]!.id) })),
  });

  it('execute_all: every decision, in order', async () => {
    const res = await w.pdpA.call('evaluations', three('execute_all'));
    expect(decisions(res.body)).toEqual([true, false, true]);
  });

  it('deny_on_first_deny: stops at the first deny, whose context names the semantic', async () => {
    const res = await w.pdpA.call('evaluations', three('deny_on_first_deny'));
    expect(decisions(res.body)).toEqual([true, false]);
    expect(res.body.evaluations[1].context.reason).toBe('deny_on_first_deny');
  });

  it('permit_on_first_permit: stops at the first permit', async () => {
    const res = await w.pdpA.call('evaluations', three('permit_on_first_permit'));
    expect(decisions(res.body)).toEqual([true]);
  });

  it('without evaluations, the top level is one evaluation (backwards compatible)', async () => {
    const res = await w.pdpA.call('evaluations', {
      subject: user(alice),
      action: { name: 'devices:read' },
      resource: device(w.devices[0]!.id),
    });
    expect(res.status, res.text).toBe(200);
    expect(decisions(res.body)).toEqual([true]);
  });

  it('an entry about a record that does not exist is decision false with an error in its context (the errors example)', async () => {
    const res = await w.pdpA.call('evaluations', {
      subject: user(viewer),
      action: { name: 'devices:read' },
      evaluations: [
        { resource: device(w.devices[0]!.id) },
        { resource: device('00000000-0000-4000-8000-00000000dead') },
        { resource: device(w.devices[1]!.id) },
      ],
    });
    expect(decisions(res.body)).toEqual([true, false, false]);
    expect(res.body.evaluations[1].context.error).toEqual({ status: 404, message: expect.any(String) });
    expect(res.body.evaluations[2].context.error).toBeUndefined();
  });
});

describe('Search API examples', () => {
  it('subject search: the users who may read a device', async () => {
    const res = await w.pdpA.call('subject', {
      subject: { type: 'user' },
      action: { name: 'devices:read' },
      resource: device(w.devices[0]!.id),
      context: { time: '2024-10-26T01:22-07:00' },
    });
    expect(res.status, res.text).toBe(200);
    const ids = res.body.results.map((r: { id: string }) => r.id);
    expect(ids).toEqual(expect.arrayContaining([alice, viewer, w.a.admin.user.id, w.a.orgAdmins[0].user.id]));
    expect(ids).not.toContain(w.a.orgAdmins[1].user.id);
    for (const r of res.body.results) expect(r.type).toBe('user');
    expect(res.body.page.next_token).toBe('');
  });

  it('resource search: the devices a user may read', async () => {
    const res = await w.pdpA.call('resource', {
      subject: user(viewer),
      action: { name: 'devices:read' },
      resource: { type: 'device' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r: { id: string }) => r.id).sort()).toEqual(
      [w.devices[0]!.id, w.devices[2]!.id].sort(),
    );
  });

  it('action search: the permissions a user holds on a device', async () => {
    const res = await w.pdpA.call('action', {
      subject: user(viewer),
      resource: device(w.devices[0]!.id),
      context: { time: '2024-10-26T01:22-07:00' },
    });
    expect(res.status, res.text).toBe(200);
    const names = res.body.results.map((r: { name: string }) => r.name);
    expect(names).toContain('devices:read');
    expect(names).not.toContain('devices:write');
  });

  it('pagination: three results with a limit of two, then the rest with the token; the last next_token is empty', async () => {
    const first = await w.pdpA.call('resource', {
      subject: user(alice),
      action: { name: 'devices:read' },
      resource: { type: 'device', properties: { organization_id: w.a.orgs[0].id } },
      page: { limit: 2 },
    });
    expect(first.status, first.text).toBe(200);
    expect(first.body.page).toEqual({ next_token: expect.stringMatching(/.+/), count: 2 });
    const second = await w.pdpA.call('resource', {
      subject: user(alice),
      action: { name: 'devices:read' },
      resource: { type: 'device', properties: { organization_id: w.a.orgs[0].id } },
      page: { token: first.body.page.next_token },
    });
    expect(second.status, second.text).toBe(200);
    expect(second.body.page).toEqual({ next_token: '', count: 1 });
    const all = [...first.body.results, ...second.body.results].map((r: { id: string }) => r.id).sort();
    expect(all).toEqual(
      w.devices
        .slice(0, 3)
        .map((d) => d.id)
        .sort(),
    );
  });
});

describe('Policy Decision Point Metadata example', () => {
  it('GET /.well-known/authzen-configuration: absolute URLs under PUBLIC_URL, no credentials needed', async () => {
    const res = await t.client().raw.get(`${t.baseUrl}/.well-known/authzen-configuration`);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const base = t.deps.config.publicUrl;
    expect(res.body).toEqual({
      policy_decision_point: base,
      access_evaluation_endpoint: `${base}/access/v1/evaluation`,
      access_evaluations_endpoint: `${base}/access/v1/evaluations`,
      search_subject_endpoint: `${base}/access/v1/search/subject`,
      search_resource_endpoint: `${base}/access/v1/search/resource`,
      search_action_endpoint: `${base}/access/v1/search/action`,
    });
  });
});
