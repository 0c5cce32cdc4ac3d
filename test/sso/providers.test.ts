// SSO provider administration: settings:read|write, the write-only client secret, validation, issuers that are
// refused (http, private addresses), status, discovery test, presets, delete with linked identities, audit.
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, ssoIdentities, ssoProviders } from '../../src/db/schema/index.js';
import { ORG_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiResponse } from '../support/client.js';
import { accountOf, auditRecords, createOrg, partnerAdmin, signedInOrgMember } from '../support/fixtures.js';
import { proveDomain } from '../support/dns.js';
import { callbackFor, runSsoLogin, startOidcProvider, type TestIdp } from '../support/oidc.js';
import {
  createActiveProvider,
  exchange,
  freshDomain,
  idpUser,
  ORG_TECHNICIAN_ROLE_ID,
  PARTNER_TECHNICIAN_ROLE_ID,
  setStatus,
  tenant,
  uniq,
} from './helpers.js';

let t: TestApp; // SSO_ALLOW_INSECURE_ISSUERS=true: the loopback IdP is usable
let secure: TestApp; // the production posture: http and private issuers refused
let idp: TestIdp;

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true', LOG_LEVEL: 'debug' });
  secure = await startApp();
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
});
afterAll(async () => {
  await t?.close();
  await secure?.close();
  await idp?.close();
});

const PROVIDER_FIELDS = [
  'allowedDomains',
  'autoProvision',
  'clientId',
  'createdAt',
  'defaultRoleId',
  'domains',
  'enforceSSO',
  'hasClientSecret',
  'id',
  'issuer',
  'lastTestedAt',
  'name',
  'orgId',
  'partnerId',
  'scopes',
  'status',
  'trustIdpMfa',
  'type',
  'updatedAt',
];

const body = (over: Record<string, unknown> = {}) => ({
  name: `Corp IdP ${uniq()}`,
  issuer: idp.issuer,
  clientId: idp.clientId,
  clientSecret: idp.clientSecret,
  ...over,
});

describe('provider CRUD through the API', () => {
  it('creates a provider that starts inactive, reads, lists, updates and deletes it, each change audited', async () => {
    const tn = await tenant(t);
    const created = await tn.api.post(
      '/sso/providers',
      body({ orgId: tn.org.id, allowedDomains: ' Example.COM, Corp.Example.org ', preset: 'okta' }),
    );
    expect(created.status, created.text).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(PROVIDER_FIELDS);
    expect(created.body).toMatchObject({
      orgId: tn.org.id,
      partnerId: tn.partner.id,
      type: 'oidc',
      status: 'inactive',
      issuer: idp.issuer,
      clientId: idp.clientId,
      hasClientSecret: true,
      scopes: 'openid email profile',
      autoProvision: false,
      defaultRoleId: null,
      allowedDomains: 'example.com,corp.example.org',
      enforceSSO: false,
      domains: [
        { domain: 'example.com', proven: false },
        { domain: 'corp.example.org', proven: false },
      ],
    });
    const id = created.body.id as string;

    const one = await tn.api.get(`/sso/providers/${id}`, { query: { orgId: tn.org.id } });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(created.body);
    const list = await tn.api.get('/sso/providers', { query: { orgId: tn.org.id } });
    expect(list.status).toBe(200);
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([id]);
    // The partner-owned list (no orgId) is another scope.
    expect((await tn.api.get('/sso/providers')).body.data).toEqual([]);

    const patched = await tn.api.patch(
      `/sso/providers/${id}`,
      {
        name: 'Renamed',
        autoProvision: true,
        defaultRoleId: ORG_TECHNICIAN_ROLE_ID,
        allowedDomains: 'EXAMPLE.com',
        enforceSSO: true,
      },
      { query: { orgId: tn.org.id } },
    );
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'Renamed',
      autoProvision: true,
      defaultRoleId: ORG_TECHNICIAN_ROLE_ID,
      allowedDomains: 'example.com',
      enforceSSO: true,
      status: 'inactive',
      hasClientSecret: true,
    });

    const deleted = await tn.api.delete(`/sso/providers/${id}`, { query: { orgId: tn.org.id } });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect((await tn.api.get(`/sso/providers/${id}`, { query: { orgId: tn.org.id } })).status).toBe(404);

    for (const action of ['sso.provider.create', 'sso.provider.update', 'sso.provider.delete']) {
      const [rec] = await auditRecords(t, action, id);
      expect(rec, action).toMatchObject({
        result: 'success',
        actorUserId: tn.user.id,
        partnerId: tn.partner.id,
        orgId: tn.org.id,
        resourceType: 'sso_provider',
      });
    }
  });

  it('lets an organisation admin manage its own organisation’s provider without naming it', async () => {
    const tn = await tenant(t);
    const admin = await signedInOrgMember(t, tn.org, { roleId: ORG_ADMIN_ROLE_ID });
    const created = await admin.api.post('/sso/providers', body());
    expect(created.status, created.text).toBe(201);
    expect(created.body.orgId).toBe(tn.org.id);
    expect((await admin.api.get('/sso/providers')).body.data).toHaveLength(1);
  });

  it('creates a partner-owned provider when a partner caller names no organisation', async () => {
    const tn = await tenant(t);
    const created = await tn.api.post(
      '/sso/providers',
      body({ autoProvision: true, defaultRoleId: PARTNER_TECHNICIAN_ROLE_ID }),
    );
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ orgId: null, partnerId: tn.partner.id, status: 'inactive' });
    expect((await tn.api.get('/sso/providers')).body.data.map((p: { id: string }) => p.id)).toEqual([created.body.id]);
  });
});

describe('the client secret is stored encrypted and never returned or logged', () => {
  it('is absent from every response, log line and audit record, and not stored in the clear', async () => {
    const tn = await tenant(t);
    const secret = `super-secret-${randomBytes(12).toString('hex')}`;
    const rotated = `rotated-secret-${randomBytes(12).toString('hex')}`;
    const seen: ApiResponse[] = [];
    const q = { query: { orgId: tn.org.id } };
    const created = await tn.api.post('/sso/providers', body({ orgId: tn.org.id, clientSecret: secret }));
    seen.push(created);
    const id = created.body.id as string;
    seen.push(await tn.api.get(`/sso/providers/${id}`, q));
    seen.push(await tn.api.get('/sso/providers', q));
    seen.push(await tn.api.patch(`/sso/providers/${id}`, { clientSecret: rotated }, q));
    seen.push(await tn.api.post(`/sso/providers/${id}/status`, { status: 'testing' }, q));
    seen.push(await tn.api.post(`/sso/providers/${id}/test`, undefined, q));
    seen.push(await tn.api.raw.patch(`/sso/providers/${id}`, { clientSecret: 'x', bogus: 1 }, q)); // a refused body
    for (const res of seen) {
      expect(res.text).not.toContain(secret);
      expect(res.text).not.toContain(rotated);
      expect(res.text).not.toMatch(/"clientSecret"/);
    }
    expect(seen[0]!.body.hasClientSecret).toBe(true);
    expect(seen[3]!.body.hasClientSecret).toBe(true);

    const [row] = await t.deps.db.select().from(ssoProviders).where(eq(ssoProviders.id, id));
    expect(row!.clientSecret).toBeTruthy();
    expect(row!.clientSecret).not.toContain(rotated);
    expect(t.deps.box.open(row!.clientSecret!, 'sso-client-secret')).toBe(rotated);

    const audits = await t.deps.db.select().from(auditLogs).where(eq(auditLogs.resourceId, id));
    expect(audits.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(audits)).not.toContain(secret);
    expect(JSON.stringify(audits)).not.toContain(rotated);
    expect(
      audits.find(
        (a) => a.action === 'sso.provider.update' && (a.details as { clientAuthChanged?: boolean }).clientAuthChanged,
      ),
    ).toBeTruthy();

    const logs = t.logs();
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(rotated);
  });

  it('reports hasClientSecret false once the secret is cleared', async () => {
    const tn = await tenant(t);
    const created = await tn.api.post('/sso/providers', body({ orgId: tn.org.id }));
    const cleared = await tn.api.patch(
      `/sso/providers/${created.body.id}`,
      { clientSecret: null },
      { query: { orgId: tn.org.id } },
    );
    expect(cleared.status).toBe(200);
    expect(cleared.body.hasClientSecret).toBe(false);
  });
});

describe('provider administration needs settings:read / settings:write', () => {
  async function memberWith(permissions: { resource: string; action: string }[]) {
    const tn = await tenant(t);
    const role = await tn.api.post('/roles', { name: `SSO ${uniq()}`, permissions, orgId: tn.org.id });
    expect(role.status, role.text).toBe(201);
    const member = await signedInOrgMember(t, tn.org, { roleId: role.body.id });
    return { tn, api: member.api };
  }

  it('answers 401 without a token', async () => {
    const anon = t.client();
    expect((await anon.get('/sso/providers')).status).toBe(401);
    expect((await anon.post('/sso/providers', body())).status).toBe(401);
    expect((await anon.get('/sso/presets')).status).toBe(401);
  });

  it('answers 403 forbidden to a member without settings permissions', async () => {
    const tn = await tenant(t);
    const tech = await signedInOrgMember(t, tn.org, { roleId: ORG_TECHNICIAN_ROLE_ID });
    for (const res of [await tech.api.get('/sso/providers'), await tech.api.post('/sso/providers', body())]) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
  });

  it('lets settings:read read but not write', async () => {
    const { tn, api } = await memberWith([{ resource: 'settings', action: 'read' }]);
    const existing = await tn.api.post('/sso/providers', body({ orgId: tn.org.id }));
    const id = existing.body.id as string;
    expect((await api.get('/sso/providers')).status).toBe(200);
    expect((await api.get(`/sso/providers/${id}`)).status).toBe(200);
    for (const res of [
      await api.post('/sso/providers', body()),
      await api.patch(`/sso/providers/${id}`, { name: 'x' }),
      await api.post(`/sso/providers/${id}/status`, { status: 'active' }),
      await api.post(`/sso/providers/${id}/test`),
      await api.delete(`/sso/providers/${id}`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
  });

  it('refuses (403 permission_ceiling) to make a provider provision a role beyond the caller’s own permissions', async () => {
    const { tn, api } = await memberWith([
      { resource: 'settings', action: 'read' },
      { resource: 'settings', action: 'write' },
    ]);
    const tooHigh = await api.post('/sso/providers', body({ autoProvision: true, defaultRoleId: ORG_ADMIN_ROLE_ID }));
    expect(tooHigh.status).toBe(403);
    expect(tooHigh.body.code).toBe('permission_ceiling');
    // A role within the caller's permissions is fine.
    const modest = await tn.api.post('/roles', {
      name: `Settings reader ${uniq()}`,
      permissions: [{ resource: 'settings', action: 'read' }],
      orgId: tn.org.id,
    });
    const ok = await api.post('/sso/providers', body({ autoProvision: true, defaultRoleId: modest.body.id }));
    expect(ok.status, ok.text).toBe(201);

    // An auto-provisioning provider an admin set up: the lesser member may rename it, not widen it.
    const admins = await tn.api.post(
      '/sso/providers',
      body({ orgId: tn.org.id, autoProvision: true, defaultRoleId: ORG_ADMIN_ROLE_ID }),
    );
    expect(admins.status).toBe(201);
    const id = admins.body.id as string;
    expect((await api.patch(`/sso/providers/${id}`, { name: 'Renamed by a lesser admin' })).status).toBe(200);
    for (const res of [
      await api.post(`/sso/providers/${id}/status`, { status: 'active' }),
      await api.patch(`/sso/providers/${id}`, { issuer: 'http://127.0.0.1:1/rogue' }),
      await api.patch(`/sso/providers/${id}`, { allowedDomains: 'rogue.example.com' }),
      await api.patch(`/sso/providers/${id}`, { autoProvision: true }),
    ]) {
      expect(res.status, res.text).toBe(403);
      expect(res.body.code).toBe('permission_ceiling');
    }
    expect((await tn.api.get(`/sso/providers/${id}`, { query: { orgId: tn.org.id } })).body).toMatchObject({
      status: 'inactive',
      issuer: idp.issuer,
    });
  });

  it("answers 404 for another tenant's provider", async () => {
    const a = await tenant(t);
    const b = await tenant(t);
    const created = await a.api.post('/sso/providers', body({ orgId: a.org.id }));
    const id = created.body.id as string;
    expect((await b.api.get(`/sso/providers/${id}`)).status).toBe(404);
    expect((await b.api.get(`/sso/providers/${id}`, { query: { orgId: a.org.id } })).status).toBe(404);
    expect((await b.api.delete(`/sso/providers/${id}`, { query: { orgId: b.org.id } })).status).toBe(404);
    // Another organisation of the same partner is another scope too.
    const sibling = await createOrg(t, a.partner.id);
    const siblingAdmin = await signedInOrgMember(t, sibling, { roleId: ORG_ADMIN_ROLE_ID });
    expect((await siblingAdmin.api.get(`/sso/providers/${id}`)).status).toBe(404);
    expect((await siblingAdmin.api.patch(`/sso/providers/${id}`, { name: 'mine now' })).status).toBe(404);
  });
});

describe('provider validation', () => {
  it('answers 400 unsupported_provider_type for a type other than oidc and saml', async () => {
    const tn = await tenant(t);
    const res = await tn.api.post('/sso/providers', body({ orgId: tn.org.id, type: 'ldap' }));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('unsupported_provider_type');
    expect((await tn.api.post('/sso/providers', body({ orgId: tn.org.id, type: 'oidc' }))).status).toBe(201);
  });

  it('answers 400 default_role_required for autoProvision without defaultRoleId, on create and on update', async () => {
    const tn = await tenant(t);
    const res = await tn.api.post('/sso/providers', body({ orgId: tn.org.id, autoProvision: true }));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('default_role_required');

    const q = { query: { orgId: tn.org.id } };
    const plain = await tn.api.post('/sso/providers', body({ orgId: tn.org.id }));
    const on = await tn.api.patch(`/sso/providers/${plain.body.id}`, { autoProvision: true }, q);
    expect(on.status).toBe(400);
    expect(on.body.code).toBe('default_role_required');

    const ok = await tn.api.patch(
      `/sso/providers/${plain.body.id}`,
      { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID },
      q,
    );
    expect(ok.status).toBe(200);
    const dropRole = await tn.api.patch(`/sso/providers/${plain.body.id}`, { defaultRoleId: null }, q);
    expect(dropRole.status).toBe(400);
    expect(dropRole.body.code).toBe('default_role_required');
  });

  it('refuses a default role from outside the provider’s scope', async () => {
    const tn = await tenant(t);
    const res = await tn.api.post(
      '/sso/providers',
      body({ orgId: tn.org.id, autoProvision: true, defaultRoleId: PARTNER_TECHNICIAN_ROLE_ID }),
    );
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });

  it('answers 400 validation_failed for unknown fields, a missing name, bad domains and scopes without openid', async () => {
    const tn = await tenant(t);
    for (const bad of [
      body({ orgId: tn.org.id, clientSecretPlain: 'x' }),
      body({ orgId: tn.org.id, name: '' }),
      body({ orgId: tn.org.id, allowedDomains: 'not a domain!' }),
      body({ orgId: tn.org.id, scopes: 'email profile' }),
      body({ orgId: tn.org.id, issuer: 'ftp://idp.example.com' }),
    ]) {
      const res = await tn.api.post('/sso/providers', bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });
});

describe('issuers over http or on private addresses are refused unless SSO_ALLOW_INSECURE_ISSUERS=true', () => {
  const refused = [
    'http://127.0.0.1:8080', // plain http, loopback
    'http://idp.example.com', // plain http, whatever the host
    'https://10.0.0.1',
    'https://127.0.0.1',
    'https://localhost',
    'https://169.254.169.254', // cloud metadata
    'https://192.168.1.10/realms/x',
    'https://172.16.5.4',
    'https://100.64.0.1',
    'https://0.0.0.0',
    'https://2130706433', // 127.0.0.1 as one number
    'https://0x7f.1', // 127.0.0.1 in hex
    'https://[::1]',
    'https://[fd00::1]',
    'https://[fe80::1]',
    'https://[::ffff:127.0.0.1]', // IPv4-mapped, written by the URL parser as [::ffff:7f00:1]
    'https://[::ffff:10.0.0.1]',
    'https://[::127.0.0.1]', // IPv4-compatible
  ];

  it('refuses each on create with 400 validation_failed naming the issuer field', async () => {
    const tn = await tenant(secure);
    for (const issuer of refused) {
      const res = await tn.api.post('/sso/providers', body({ orgId: tn.org.id, issuer }));
      expect(res.status, issuer).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(Object.keys(res.body.details.fieldErrors)).toEqual(['issuer']);
    }
  });

  it('refuses them on update too', async () => {
    const tn = await tenant(secure);
    // A provider stored directly (no public IdP in the test environment), then pointed at private addresses.
    const [row] = await secure.deps.db
      .insert(ssoProviders)
      .values({
        partnerId: tn.partner.id,
        orgId: tn.org.id,
        name: 'Stored',
        issuer: 'https://idp.example.com',
        clientId: 'c',
      })
      .returning();
    for (const issuer of ['http://idp.example.com', 'https://10.0.0.1', 'https://[::ffff:127.0.0.1]']) {
      const res = await tn.api.patch(`/sso/providers/${row!.id}`, { issuer }, { query: { orgId: tn.org.id } });
      expect(res.status, issuer).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('refuses an insecure issuer at use time too: login ends in error=provider_unavailable, the test reports ok=false', async () => {
    const tn = await tenant(secure);
    const [row] = await secure.deps.db
      .insert(ssoProviders)
      .values({
        partnerId: tn.partner.id,
        orgId: tn.org.id,
        name: 'Smuggled',
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: secure.deps.box.seal(idp.clientSecret, 'sso-client-secret'),
        status: 'active',
      })
      .returning();
    const r = await runSsoLogin(secure, tn.org.id);
    expect(r.error).toBe('provider_unavailable');
    expect(r.visited).toHaveLength(1);
    const test = await tn.api.post(`/sso/providers/${row!.id}/test`, undefined, { query: { orgId: tn.org.id } });
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ ok: false, error: expect.stringMatching(/https/) });
  });

  it('accepts the loopback http issuer when the flag is on (tests only)', async () => {
    const tn = await tenant(t);
    expect((await tn.api.post('/sso/providers', body({ orgId: tn.org.id }))).status).toBe(201);
  });
});

describe('provider status', () => {
  it('moves between inactive, testing and active as requested, audited as sso.provider.update', async () => {
    const tn = await tenant(t);
    const q = { query: { orgId: tn.org.id } };
    const created = await tn.api.post('/sso/providers', body({ orgId: tn.org.id }));
    const id = created.body.id as string;
    for (const status of ['testing', 'active', 'inactive', 'active'] as const) {
      const res = await tn.api.post(`/sso/providers/${id}/status`, { status }, q);
      expect(res.status, status).toBe(200);
      expect(res.body.status).toBe(status);
      expect((await tn.api.get(`/sso/providers/${id}`, q)).body.status).toBe(status);
    }
    const bad = await tn.api.raw.post(`/sso/providers/${id}/status`, { status: 'enabled' }, q);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    const statusAudits = (await auditRecords(t, 'sso.provider.update', id)).map(
      (a) => (a.details as { status?: string }).status,
    );
    expect(statusAudits).toEqual(['testing', 'active', 'inactive', 'active']);
  });

  it('keeps one active provider per scope (409 for a second)', async () => {
    const tn = await tenant(t);
    await createActiveProvider(tn.api, idp, tn.org.id);
    const second = await tn.api.post('/sso/providers', body({ orgId: tn.org.id }));
    const res = await setStatus(tn.api, second.body.id, 'active', tn.org.id);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('conflict');
  });
});

describe('POST /sso/providers/:id/test tries OpenID discovery', () => {
  it('answers ok with the discovered endpoints', async () => {
    const tn = await tenant(t);
    const created = await tn.api.post('/sso/providers', body({ orgId: tn.org.id }));
    const res = await tn.api.post(`/sso/providers/${created.body.id}/test`, undefined, { query: { orgId: tn.org.id } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      issuer: idp.issuer,
      authorizationEndpoint: `${idp.issuer}/auth`,
      tokenEndpoint: `${idp.issuer}/token`,
      jwksUri: `${idp.issuer}/jwks`,
    });
  });

  it('answers 200 { ok: false, error } when discovery fails', async () => {
    const tn = await tenant(t);
    const created = await tn.api.post('/sso/providers', body({ orgId: tn.org.id, issuer: 'http://127.0.0.1:1' }));
    const res = await tn.api.post(`/sso/providers/${created.body.id}/test`, undefined, { query: { orgId: tn.org.id } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['error', 'ok']);
    expect(res.body.ok).toBe(false);
    expect(res.body.error).toEqual(expect.any(String));
  });
});

describe('GET /sso/presets', () => {
  it('lists Entra ID, Okta, Google Workspace, Auth0, Keycloak and a generic OpenID Connect preset', async () => {
    const { api } = await partnerAdmin(t);
    const res = await api.get('/sso/presets');
    expect(res.status).toBe(200);
    const names = res.body.data.map((p: { name: string }) => p.name);
    for (const expected of [/Entra ID/, /Okta/, /Google Workspace/, /Auth0/, /Keycloak/, /Generic/i])
      expect(
        names.some((n: string) => expected.test(n)),
        String(expected),
      ).toBe(true);
    for (const p of res.body.data) {
      expect(p).toMatchObject({
        id: expect.any(String),
        type: 'oidc',
        issuerTemplate: expect.stringMatching(/^https:\/\//),
        scopes: expect.stringMatching(/\bopenid\b/),
      });
    }
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual(
      expect.arrayContaining(['entra', 'okta', 'google', 'auth0', 'keycloak', 'generic']),
    );
  });

  it('covers JumpCloud, OneLogin and PingOne too, each with the redirect URI to register, the e-mail and name claims and a setup note', async () => {
    const { api } = await partnerAdmin(t);
    const res = await api.get('/sso/presets');
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual(
      expect.arrayContaining(['jumpcloud', 'onelogin', 'pingone']),
    );
    for (const p of res.body.data) {
      expect(p).toMatchObject({
        redirectUri: `${t.deps.config.publicUrl}/api/v1/sso/callback`,
        emailClaim: 'email',
        nameClaim: 'name',
        notes: expect.stringMatching(/\S{3}/),
      });
    }
  });

  it('a preset supplies the scopes when none are given', async () => {
    const tn = await tenant(t);
    const res = await tn.api.post('/sso/providers', body({ orgId: tn.org.id, preset: 'google' }));
    expect(res.status).toBe(201);
    expect(res.body.scopes).toBe('openid email profile');
    expect((await tn.api.post('/sso/providers', body({ orgId: tn.org.id, preset: 'ping' }))).status).toBe(400);
  });
});

describe('deleting a provider deletes the identities linked to it', () => {
  it('removes the links (the accounts survive), and a later login with that subject does not find the old link', async () => {
    const tn = await tenant(t);
    const domain = freshDomain();
    await proveDomain(tn.api, domain, tn.org.id);
    const provider = await createActiveProvider(tn.api, idp, tn.org.id, {
      allowedDomains: domain,
      autoProvision: true,
      defaultRoleId: ORG_TECHNICIAN_ROLE_ID,
    });
    const who = idpUser(`linked@${domain}`);
    const signed = await exchange(t, (await runSsoLogin(t, tn.org.id, { idp, user: who })).ssoCode!);
    expect(signed.status).toBe(200);
    const userId = signed.body.user.id as string;
    expect(await t.deps.db.select().from(ssoIdentities).where(eq(ssoIdentities.providerId, provider.id))).toHaveLength(
      1,
    );

    const res = await tn.api.delete(`/sso/providers/${provider.id}`, { query: { orgId: tn.org.id } });
    expect(res.status).toBe(200);
    expect(await t.deps.db.select().from(ssoIdentities).where(eq(ssoIdentities.providerId, provider.id))).toHaveLength(
      0,
    );
    expect(await t.deps.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, userId))).toHaveLength(0);
    expect(await accountOf(t, userId)).not.toBeNull();
    const [rec] = await auditRecords(t, 'sso.provider.delete', provider.id);
    expect(rec).toMatchObject({ actorUserId: tn.user.id, orgId: tn.org.id });
    expect((await runSsoLogin(t, tn.org.id, { idp, user: who })).error).toBe('provider_not_found');
  });

  it('leaves the identities of other providers alone', async () => {
    const tn = await tenant(t);
    const other = await createOrg(t, tn.partner.id);
    const domain = freshDomain();
    const dropDomain = freshDomain();
    await proveDomain(tn.api, domain, other.id);
    await proveDomain(tn.api, dropDomain, tn.org.id);
    const keep = await createActiveProvider(tn.api, idp, other.id, {
      allowedDomains: domain,
      autoProvision: true,
      defaultRoleId: ORG_TECHNICIAN_ROLE_ID,
    });
    const drop = await createActiveProvider(tn.api, idp, tn.org.id, {
      allowedDomains: dropDomain,
      autoProvision: true,
      defaultRoleId: ORG_TECHNICIAN_ROLE_ID,
    });
    expect((await runSsoLogin(t, other.id, { idp, user: idpUser(`keep@${domain}`) })).ssoCode).toBeTruthy();
    expect((await runSsoLogin(t, tn.org.id, { idp, user: idpUser(`drop@${dropDomain}`) })).ssoCode).toBeTruthy();
    expect((await tn.api.delete(`/sso/providers/${drop.id}`, { query: { orgId: tn.org.id } })).status).toBe(200);
    expect(
      await t.deps.db
        .select()
        .from(ssoIdentities)
        .where(and(eq(ssoIdentities.providerId, keep.id))),
    ).toHaveLength(1);
  });
});
