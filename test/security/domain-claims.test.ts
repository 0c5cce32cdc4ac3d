// Domains are proven, not claimed: an attacker who runs a partner of their own lists, claims and races for a victim's
// e-mail domain. Each attack is carried out through the API as the attacker would, against a real DNS server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import { proveDomain, testDns, type TestDns } from '../support/dns.js';
import { addOrgMember, addPartnerMember, createUser } from '../support/fixtures.js';
import { callbackFor, runSsoLogin, startOidcProvider, type TestIdp } from '../support/oidc.js';
import {
  createActiveProvider,
  freshDomain,
  idpUser,
  linkFlowOf,
  ORG_TECHNICIAN_ROLE_ID,
  PARTNER_TECHNICIAN_ROLE_ID,
  tenant,
  uniq,
} from '../sso/helpers.js';
import { sql } from 'drizzle-orm';

let t: TestApp;
let idp: TestIdp;
let dns: TestDns;
const PASSWORD = 'correct horse battery staple 42';

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true', RATE_LIMIT_LOGIN: '1000/900' });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
  dns = await testDns();
}, 120_000);
afterAll(async () => {
  await t?.close();
  await idp?.close();
});

const discover = (email: string) => t.client().post('/auth/sso-discovery', { email });
const accountWith = async (email: string) =>
  (await t.deps.db.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = lower(${email})`))[0];

describe('a partner listing a domain it has not proven on its SSO provider routes nobody', () => {
  it('the attacker’s provider, created first, never receives the victim’s users in discovery', async () => {
    const victim = await tenant(t);
    const attacker = await tenant(t);
    const domain = freshDomain();
    // The attacker gets there first: an active provider that lists the victim's domain, partner-wide.
    await createActiveProvider(attacker.api, idp, null, { name: 'Attacker IdP', allowedDomains: domain });
    expect((await discover(`ceo@${domain}`)).body).toEqual({ ssoEnabled: false });

    // The victim proves its domain and sets up its own provider: discovery goes there, and only there.
    await proveDomain(victim.api, domain, victim.org.id);
    await createActiveProvider(victim.api, idp, victim.org.id, { name: 'Victim IdP', allowedDomains: domain });
    const res = await discover(`ceo@${domain}`);
    expect(res.body).toMatchObject({ ssoEnabled: true, orgId: victim.org.id, providerName: 'Victim IdP' });
    expect(res.text).not.toContain(attacker.partner.id);
  });

  it('a proven domain without a provider of its owner routes nowhere, whoever else lists it', async () => {
    const victim = await tenant(t);
    const attacker = await tenant(t);
    const domain = freshDomain();
    await proveDomain(victim.api, domain);
    await createActiveProvider(attacker.api, idp, attacker.org.id, { allowedDomains: domain });
    expect((await discover(`someone@${domain}`)).body).toEqual({ ssoEnabled: false });
  });

  it('the attacker’s provider cannot auto-provision accounts in the unproven domain', async () => {
    const attacker = await tenant(t);
    const domain = freshDomain();
    const p = await createActiveProvider(attacker.api, idp, attacker.org.id, {
      allowedDomains: domain,
      autoProvision: true,
      defaultRoleId: ORG_TECHNICIAN_ROLE_ID,
    });
    const email = `future-hire-${uniq()}@${domain}`;
    const r = await runSsoLogin(t, p.orgId!, { idp, user: idpUser(email) });
    expect(r.error).toBe('domain_not_verified');
    expect(await accountWith(email)).toBeUndefined();
  });

  it('the attacker’s IdP asserting a member’s address does not link that account without its password', async () => {
    const attacker = await tenant(t);
    const domain = freshDomain();
    // A person of the victim's domain who is (also) a member of the attacker's organisation.
    const member = await createUser(t, { email: `shared-${uniq()}@${domain}`, password: PASSWORD });
    await addOrgMember(t, { orgId: attacker.org.id, userId: member.id });
    const p = await createActiveProvider(attacker.api, idp, attacker.org.id, { allowedDomains: domain });
    const r = await runSsoLogin(t, p.orgId!, { idp, user: idpUser(member.email) });
    expect(r.ssoCode).toBeNull();
    expect(linkFlowOf(r.location)).not.toBeNull();
  });

  it('the attacker’s enforced provider does not take password sign-in from addresses of a domain it has not proven', async () => {
    const victim = await tenant(t);
    const attacker = await tenant(t);
    const domain = freshDomain();
    await proveDomain(victim.api, domain, victim.org.id);
    const person = await createUser(t, { email: `admin-${uniq()}@${domain}`, password: PASSWORD });
    await addOrgMember(t, { orgId: victim.org.id, userId: person.id });
    await addPartnerMember(t, {
      partnerId: attacker.partner.id,
      userId: person.id,
      roleId: PARTNER_TECHNICIAN_ROLE_ID,
    });
    await createActiveProvider(attacker.api, idp, null, { allowedDomains: domain, enforceSSO: true });
    const login = await t.client().post('/auth/login', { email: person.email, password: PASSWORD });
    expect(login.status, login.text).toBe(200);
  });
});

describe('claiming a domain first wins nothing: the TXT record decides', () => {
  it('the attacker’s earlier claim never verifies; the owner who publishes the record proves it', async () => {
    const victim = await tenant(t);
    const attacker = await tenant(t);
    const domain = freshDomain();
    const early = (await attacker.api.post('/domains', { domain })).body;
    const attempt = await attacker.api.post(`/domains/${early.id}/verify`, {});
    expect([attempt.status, attempt.body.code]).toEqual([409, 'domain_not_verified']);

    const owned = (await victim.api.post('/domains', { domain, orgId: victim.org.id })).body;
    expect(owned.txtValue).not.toBe(early.txtValue);
    // The owner publishes its own record at its DNS host, and only that one.
    dns.publish(owned.txtName, owned.txtValue);
    const proven = await victim.api.post(`/domains/${owned.id}/verify`, {});
    expect([proven.status, proven.body.status]).toEqual([200, 'verified']);

    const late = await attacker.api.post(`/domains/${early.id}/verify`, {});
    expect([late.status, late.body.code]).toEqual([409, 'domain_taken']);
  });
});

describe('one domain, one tenant', () => {
  it('a domain verified by partner A: partner B’s claim and its verification are 409 domain_taken', async () => {
    const a = await tenant(t);
    const b = await tenant(t);
    const domain = freshDomain();
    const bClaim = (await b.api.post('/domains', { domain })).body;
    await proveDomain(a.api, domain);
    // Even with B's record published too (a careless DNS host), the proof stays A's.
    dns.publish(bClaim.txtName, bClaim.txtValue);
    const verify = await b.api.post(`/domains/${bClaim.id}/verify`, {});
    expect([verify.status, verify.body.code]).toEqual([409, 'domain_taken']);
    const claim = await b.api.post('/domains', { domain, orgId: b.org.id });
    expect([claim.status, claim.body.code]).toEqual([409, 'domain_taken']);
  });

  it('two partners verifying the same domain at once: one wins, the other is 409 domain_taken', async () => {
    for (let round = 0; round < 3; round++) {
      const a = await tenant(t);
      const b = await tenant(t);
      const domain = freshDomain();
      const ca = (await a.api.post('/domains', { domain })).body;
      const cb = (await b.api.post('/domains', { domain })).body;
      dns.publish(ca.txtName, ca.txtValue);
      dns.publish(cb.txtName, cb.txtValue);
      const results = await Promise.all([
        a.api.post(`/domains/${ca.id}/verify`, {}),
        b.api.post(`/domains/${cb.id}/verify`, {}),
      ]);
      const statuses = results.map((r) => r.status).sort();
      expect(statuses, results.map((r) => r.text).join('\n')).toEqual([200, 409]);
      expect(results.find((r) => r.status === 409)!.body.code).toBe('domain_taken');
      const verified = await t.deps.db.execute(
        sql`select partner_id from domains where domain = ${domain} and status = 'verified'`,
      );
      expect((verified as unknown as { rows: unknown[] }).rows.length).toBe(1);
    }
  });
});

describe('an SSO provider answer says which of its domains are proven, and by its own tenant only', () => {
  it('a domain the victim proved is unproven on the attacker’s provider; the victim’s own provider shows it proven', async () => {
    const victim = await tenant(t);
    const attacker = await tenant(t);
    const victims = freshDomain();
    const unproven = freshDomain();
    await proveDomain(victim.api, victims, victim.org.id);
    const theirs = await createActiveProvider(attacker.api, idp, null, { allowedDomains: `${victims},${unproven}` });
    const own = await createActiveProvider(victim.api, idp, victim.org.id, {
      allowedDomains: `${victims},${unproven}`,
    });
    // The partner's own provider is another tenant than its organisation: the organisation's proof does not count.
    const partnerWide = await createActiveProvider(victim.api, idp, null, { allowedDomains: victims });

    const attackerView = await attacker.api.get(`/sso/providers/${theirs.id}`);
    expect(attackerView.status, attackerView.text).toBe(200);
    expect(attackerView.body.domains).toEqual([
      { domain: victims, proven: false },
      { domain: unproven, proven: false },
    ]);
    const victimList = await victim.api.get('/sso/providers', { query: { orgId: victim.org.id } });
    expect(victimList.body.data.find((p: { id: string }) => p.id === own.id)?.domains).toEqual([
      { domain: victims, proven: true },
      { domain: unproven, proven: false },
    ]);
    const partnerView = await victim.api.get(`/sso/providers/${partnerWide.id}`);
    expect(partnerView.body.domains).toEqual([{ domain: victims, proven: false }]);
  });
});
