// Scripts: the partner's library is visible in every organisation of the partner and
// changed only with orgAccess all; organisation scripts belong to one organisation. scripts:read|write|delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import type { RequestBody } from '../support/api-types.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import { auditRecords, onboardingTenant, signedInPartnerMember, type OnboardingTenant } from '../support/fixtures.js';

let t: TestApp;
let a: OnboardingTenant;
let b: OnboardingTenant;
beforeAll(async () => {
  t = await startApp();
  a = await onboardingTenant(t);
  b = await onboardingTenant(t);
});
afterAll(async () => t?.close());

const refused = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ code, error: expect.any(String), message: expect.any(String) });
};
const fieldError = (res: ApiResponse, field: string) => {
  refused(res, 400, 'validation_failed');
  const keys = Object.keys(res.body.details.fieldErrors);
  expect(
    keys.some((k) => k === field || k.startsWith(`${field}.`)),
    `${field} in ${JSON.stringify(res.body.details)}`,
  ).toBe(true);
};

type ScriptInput = RequestBody<'post', '/scripts'>;
const PARAMS: ScriptInput['parameters'] = [
  { name: 'Path', type: 'string', required: true, description: 'Folder to clean' },
  { name: 'days', type: 'number', default: 30 },
  { name: 'dryRun', type: 'boolean', default: false },
  { name: 'level', type: 'select', options: ['low', 'high'], default: 'low' },
];
let n = 0;
const scriptBody = (extra: Partial<ScriptInput> = {}): ScriptInput => ({
  name: `Clean temp ${++n}`,
  language: 'powershell',
  content: 'Remove-Item -Recurse $Path\\*.tmp',
  availability: 'organization',
  ...extra,
});
/** A body with fields no script takes: sent raw. */
const badScriptBody = (extra: Record<string, unknown>) => ({ ...scriptBody(), ...extra });
async function create(api: ApiClient, extra: Partial<ScriptInput>) {
  const res = await api.post('/scripts', scriptBody(extra));
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; orgId: string | null };
}
const ids = (res: ApiResponse) => (res.body.data as { id: string }[]).map((r) => r.id);

describe('creating a script', () => {
  it('an organisation script: 201 with its content, parameters and exit-code mapping', async () => {
    const res = await a.admin.api.post(
      '/scripts',
      scriptBody({
        orgId: a.orgs[0].id,
        description: 'weekly',
        parameters: PARAMS,
        exitCodeSeverityMapping: { '0': 'info', '1': 'warning', '-1': 'critical' },
      }),
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      partnerId: a.partner.id,
      orgId: a.orgs[0].id,
      name: expect.stringMatching(/^Clean temp/),
      description: 'weekly',
      language: 'powershell',
      content: 'Remove-Item -Recurse $Path\\*.tmp',
      availability: 'organization',
      parameters: PARAMS,
      exitCodeSeverityMapping: { '0': 'info', '1': 'warning', '-1': 'critical' },
      source: 'organization',
      createdBy: a.admin.user.id,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await a.admin.api.get(`/scripts/${res.body.id}`)).body).toEqual(res.body);
  });

  it('a partner script has no orgId; an organisation script must name its organisation', async () => {
    const shared = await create(a.admin.api, { availability: 'partner', language: 'bash', content: 'echo hi' });
    expect(shared).toMatchObject({ orgId: null, availability: 'partner', source: 'partner' });
    fieldError(
      await a.admin.api.post('/scripts', scriptBody({ availability: 'partner', orgId: a.orgs[0].id })),
      'orgId',
    );
    fieldError(await a.admin.api.post('/scripts', scriptBody({ availability: 'organization' })), 'orgId');
    fieldError(await a.orgAdmins[0].api.post('/scripts', scriptBody({ availability: 'organization' })), 'orgId');
    fieldError(
      await a.admin.api.raw.post('/scripts', badScriptBody({ availability: 'everyone', orgId: a.orgs[0].id })),
      'availability',
    );
    expect(await create(a.orgAdmins[0].api, { orgId: a.orgs[0].id })).toMatchObject({ orgId: a.orgs[0].id });
  });

  it('every script language (powershell, cmd, bash, python) is accepted and nothing else', async () => {
    for (const language of ['powershell', 'cmd', 'bash', 'python'] as const)
      await create(a.orgAdmins[0].api, { orgId: a.orgs[0].id, language });
    fieldError(
      await a.orgAdmins[0].api.raw.post('/scripts', badScriptBody({ orgId: a.orgs[0].id, language: 'perl' })),
      'language',
    );
  });

  const badParams: [string, unknown, string][] = [
    ['a name that is not an identifier', [{ name: '1st', type: 'string' }], 'parameters.0.name'],
    ['a name with a dash', [{ name: 'my-param', type: 'string' }], 'parameters.0.name'],
    [
      'two parameters of one name (case-insensitive)',
      [
        { name: 'Path', type: 'string' },
        { name: 'path', type: 'string' },
      ],
      'parameters.1.name',
    ],
    ['51 parameters', Array.from({ length: 51 }, (_, i) => ({ name: `p${i}`, type: 'string' })), 'parameters'],
    ['an unknown type', [{ name: 'x', type: 'date' }], 'parameters.0.type'],
    ['a number default given as a string', [{ name: 'x', type: 'number', default: '5' }], 'parameters.0.default'],
    ['a boolean default given as a string', [{ name: 'x', type: 'boolean', default: 'true' }], 'parameters.0.default'],
    ['a string default given as a number', [{ name: 'x', type: 'string', default: 5 }], 'parameters.0.default'],
    [
      'a select default outside its options',
      [{ name: 'x', type: 'select', options: ['a', 'b'], default: 'c' }],
      'parameters.0.default',
    ],
    ['a select without options', [{ name: 'x', type: 'select' }], 'parameters.0.options'],
    ['a select with repeated options', [{ name: 'x', type: 'select', options: ['a', 'a'] }], 'parameters.0.options'],
    ['options on a string parameter', [{ name: 'x', type: 'string', options: ['a'] }], 'parameters.0.options'],
    ['an unknown parameter field', [{ name: 'x', type: 'string', secret: true }], 'parameters.0.secret'],
    ['parameters that are not a list', { name: 'x' }, 'parameters'],
  ];
  it.each(badParams)('refuses %s (400 validation_failed)', async (_label, parameters, field) => {
    fieldError(await a.admin.api.raw.post('/scripts', badScriptBody({ orgId: a.orgs[0].id, parameters })), field);
  });

  it('exit codes are 32-bit integers written plainly, mapped to info | warning | error | critical', async () => {
    const edges = { '0': 'info', '-2147483648': 'error', '2147483647': 'critical', '3010': 'warning' } as const;
    const ok = await create(a.admin.api, { orgId: a.orgs[0].id, exitCodeSeverityMapping: edges });
    expect((await a.admin.api.get(`/scripts/${ok.id}`)).body.exitCodeSeverityMapping).toEqual(edges);
    for (const code of ['2147483648', '-2147483649', '01', '-0', '1.5', '1e3', 'abc', '', ' 1']) {
      const res = await a.admin.api.post(
        '/scripts',
        scriptBody({ orgId: a.orgs[0].id, exitCodeSeverityMapping: { [code]: 'error' } }),
      );
      refused(res, 400, 'validation_failed');
    }
    fieldError(
      await a.admin.api.raw.post(
        '/scripts',
        badScriptBody({ orgId: a.orgs[0].id, exitCodeSeverityMapping: { '1': 'fatal' } }),
      ),
      'exitCodeSeverityMapping',
    );
  });

  it('content is 1..1 MiB of UTF-8 without NUL; a larger request body is 413', async () => {
    const max = await create(a.admin.api, { orgId: a.orgs[0].id, content: 'x'.repeat(1024 * 1024) });
    expect((await a.admin.api.get(`/scripts/${max.id}`)).body.content).toHaveLength(1024 * 1024);
    fieldError(
      await a.admin.api.post('/scripts', scriptBody({ orgId: a.orgs[0].id, content: 'x'.repeat(1024 * 1024 + 1) })),
      'content',
    );
    // 600,000 characters but 1,200,000 bytes: the limit is on bytes, as the database check is.
    fieldError(
      await a.admin.api.post('/scripts', scriptBody({ orgId: a.orgs[0].id, content: 'é'.repeat(600_000) })),
      'content',
    );
    fieldError(await a.admin.api.post('/scripts', scriptBody({ orgId: a.orgs[0].id, content: '' })), 'content');
    fieldError(
      await a.admin.api.post('/scripts', scriptBody({ orgId: a.orgs[0].id, content: 'echo \u0000' })),
      'content',
    );
    refused(
      await a.admin.api.post('/scripts', scriptBody({ orgId: a.orgs[0].id, content: 'x'.repeat(9 * 1024 * 1024) })),
      413,
      'payload_too_large',
    );
  });

  it('refuses unknown fields, a NUL in the name, a non-uuid id and bad list queries', async () => {
    fieldError(
      await a.admin.api.raw.post('/scripts', badScriptBody({ orgId: a.orgs[0].id, partnerId: b.partner.id })),
      'partnerId',
    );
    fieldError(await a.admin.api.post('/scripts', scriptBody({ orgId: a.orgs[0].id, name: 'a\u0000b' })), 'name');
    refused(await a.admin.api.get('/scripts/123'), 400, 'validation_failed');
    refused(await a.admin.api.get('/scripts', { query: { limit: 0 } }), 400, 'validation_failed');
    refused(await a.admin.api.get('/scripts', { query: { cursor: '!!' } }), 400, 'validation_failed');
    refused(await a.admin.api.get('/scripts', { query: { orgId: 'x' } }), 400, 'validation_failed');
  });
});

describe("the partner's scripts are visible in every organisation of the partner", () => {
  it("GET /scripts?orgId= lists the partner scripts and the organisation's own, each with its source, without content", async () => {
    const shared = await create(a.admin.api, { availability: 'partner', name: 'Shared library script' });
    const own0 = await create(a.orgAdmins[0].api, { orgId: a.orgs[0].id });
    const own1 = await create(a.orgAdmins[1].api, { orgId: a.orgs[1].id });
    const list0 = await a.admin.api.get('/scripts', { query: { orgId: a.orgs[0].id, limit: 200 } });
    expect(list0.status, list0.text).toBe(200);
    expect(ids(list0)).toEqual(expect.arrayContaining([shared.id, own0.id]));
    expect(ids(list0)).not.toContain(own1.id);
    const row = list0.body.data.find((r: { id: string }) => r.id === shared.id);
    expect(row).toMatchObject({ source: 'partner', availability: 'partner' });
    expect(row).not.toHaveProperty('content');
    expect(list0.body.data.find((r: { id: string }) => r.id === own0.id)?.source).toBe('organization');
    for (const admin of a.orgAdmins) {
      const list = await admin.api.get('/scripts', { query: { limit: 200 } });
      expect(ids(list)).toContain(shared.id);
      expect((await admin.api.get(`/scripts/${shared.id}`)).body.content).toBe('Remove-Item -Recurse $Path\\*.tmp');
    }
    const partnerLevel = await a.admin.api.get('/scripts', { query: { limit: 200 } });
    expect(ids(partnerLevel)).toContain(shared.id);
    expect(ids(partnerLevel)).not.toContain(own0.id);
    const bash = await a.orgAdmins[0].api.get('/scripts', { query: { language: 'bash', limit: 200 } });
    expect(bash.body.data.every((r: { language: string }) => r.language === 'bash')).toBe(true);
  });

  it('only partner users with orgAccess all create, change or delete a partner script (403 full_org_access_required)', async () => {
    const shared = await create(a.admin.api, { availability: 'partner' });
    for (const caller of [a.selected, a.orgAdmins[0]]) {
      refused(
        await caller.api.post('/scripts', scriptBody({ availability: 'partner' })),
        403,
        'full_org_access_required',
      );
      refused(
        await caller.api.patch(`/scripts/${shared.id}`, { content: 'rm -rf /' }),
        403,
        'full_org_access_required',
      );
      refused(await caller.api.delete(`/scripts/${shared.id}`), 403, 'full_org_access_required');
    }
    expect((await a.admin.api.get(`/scripts/${shared.id}`)).body.content).toBe('Remove-Item -Recurse $Path\\*.tmp');
    const changed = await a.admin.api.patch(`/scripts/${shared.id}`, {
      content: 'Get-Date',
      parameters: [{ name: 'when', type: 'string' }],
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({
      content: 'Get-Date',
      parameters: [{ name: 'when', type: 'string' }],
      availability: 'partner',
    });
    expect((await a.admin.api.delete(`/scripts/${shared.id}`)).status).toBe(200);
    refused(await a.orgAdmins[0].api.get(`/scripts/${shared.id}`), 404, 'not_found');
  });

  it('availability and orgId are fixed: a PATCH cannot move a script between levels', async () => {
    const own = await create(a.orgAdmins[0].api, { orgId: a.orgs[0].id });
    fieldError(await a.orgAdmins[0].api.raw.patch(`/scripts/${own.id}`, { availability: 'partner' }), 'availability');
    fieldError(await a.orgAdmins[0].api.raw.patch(`/scripts/${own.id}`, { orgId: a.orgs[1].id }), 'orgId');
    refused(await a.orgAdmins[0].api.patch(`/scripts/${own.id}`, {}), 400, 'validation_failed');
    fieldError(
      await a.orgAdmins[0].api.patch(`/scripts/${own.id}`, {
        parameters: [{ name: 'x', type: 'number', default: 'no' }],
      }),
      'parameters.0.default',
    );
    const ok = await a.orgAdmins[0].api.patch(`/scripts/${own.id}`, {
      exitCodeSeverityMapping: { '2': 'error' },
      description: null,
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({
      exitCodeSeverityMapping: { '2': 'error' },
      description: null,
      orgId: a.orgs[0].id,
      availability: 'organization',
    });
  });

  it('create, update and delete are audited with the owning tenant', async () => {
    const own = await create(a.orgAdmins[0].api, { orgId: a.orgs[0].id });
    await a.orgAdmins[0].api.patch(`/scripts/${own.id}`, { name: 'Renamed' });
    await a.orgAdmins[0].api.delete(`/scripts/${own.id}`);
    for (const action of ['script.create', 'script.update', 'script.delete']) {
      const recs = await auditRecords(t, action, own.id);
      expect(recs, action).toHaveLength(1);
      expect(recs[0]).toMatchObject({
        partnerId: a.partner.id,
        orgId: a.orgs[0].id,
        resourceType: 'script',
        actorUserId: a.orgAdmins[0].user.id,
      });
    }
  });
});

describe('tenant isolation', () => {
  it("another partner's scripts are 404 on every route and never listed", async () => {
    const shared = await create(a.admin.api, { availability: 'partner' });
    const own = await create(a.admin.api, { orgId: a.orgs[0].id });
    for (const caller of [b.admin, b.orgAdmins[0]]) {
      for (const id of [shared.id, own.id]) {
        refused(await caller.api.get(`/scripts/${id}`), 404, 'not_found');
        refused(await caller.api.patch(`/scripts/${id}`, { name: 'stolen' }), 404, 'not_found');
        refused(await caller.api.delete(`/scripts/${id}`), 404, 'not_found');
      }
      const list = await caller.api.get('/scripts', { query: { limit: 200 } });
      expect(list.body.data.every((r: { partnerId: string }) => r.partnerId === b.partner.id)).toBe(true);
    }
    refused(await b.admin.api.get('/scripts', { query: { orgId: a.orgs[0].id } }), 404, 'not_found');
    refused(await b.admin.api.post('/scripts', scriptBody({ orgId: a.orgs[0].id })), 404, 'not_found');
    expect((await a.admin.api.get(`/scripts/${own.id}`)).body.name).toBe(own.name);
  });

  it("a sibling organisation's scripts are 404 to its neighbour and to a partner user without access to it", async () => {
    const other = await create(a.admin.api, { orgId: a.orgs[1].id });
    for (const caller of [a.orgAdmins[0], a.selected]) {
      refused(await caller.api.get(`/scripts/${other.id}`), 404, 'not_found');
      refused(await caller.api.patch(`/scripts/${other.id}`, { name: 'x' }), 404, 'not_found');
      refused(await caller.api.delete(`/scripts/${other.id}`), 404, 'not_found');
      refused(await caller.api.get('/scripts', { query: { orgId: a.orgs[1].id } }), 404, 'not_found');
      refused(await caller.api.post('/scripts', scriptBody({ orgId: a.orgs[1].id })), 404, 'not_found');
    }
    const mine = await a.selected.api.get('/scripts', { query: { orgId: a.orgs[0].id, limit: 200 } });
    expect(mine.status).toBe(200);
    expect(ids(mine)).not.toContain(other.id);
  });
});

describe('permissions: scripts:read | write | delete', () => {
  it('viewers read, technicians (scripts:read, execute) cannot write, and deleting needs scripts:delete', async () => {
    const own = await create(a.admin.api, { orgId: a.orgs[0].id });
    expect((await a.viewer.api.get(`/scripts/${own.id}`)).status).toBe(200);
    expect((await a.orgViewer.api.get('/scripts')).status).toBe(200);
    refused(await a.viewer.api.post('/scripts', scriptBody({ orgId: a.orgs[0].id })), 403, 'forbidden');
    refused(await a.tech.api.patch(`/scripts/${own.id}`, { name: 'x' }), 403, 'forbidden');
    refused(await a.tech.api.delete(`/scripts/${own.id}`), 403, 'forbidden');
    const role = await a.admin.api.post('/roles', {
      name: 'Script writer',
      permissions: [
        { resource: 'scripts', action: 'read' },
        { resource: 'scripts', action: 'write' },
      ],
    });
    expect(role.status, role.text).toBe(201);
    const writer = await signedInPartnerMember(t, a.partner.id, { roleId: role.body.id });
    expect((await writer.api.patch(`/scripts/${own.id}`, { name: 'by writer' })).status).toBe(200);
    refused(await writer.api.delete(`/scripts/${own.id}`), 403, 'forbidden');
    // The permission is refused before the body is validated.
    refused(await a.viewer.api.raw.post('/scripts', { nonsense: true }), 403, 'forbidden');
  });
});
