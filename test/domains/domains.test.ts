// Domains through the API: claim, validation, the TXT proof against a real DNS server, delete, and who sees what.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { errorBody } from '../support/client.js';
import { proveDomain, testDns, type TestDns } from '../support/dns.js';
import {
  auditRecords,
  createOrg,
  partnerAdmin,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';

const PARTNER_TECHNICIAN_ROLE_ID = '00000000-0000-4000-8000-000000000002';
const fresh = () => `d-${randomBytes(4).toString('hex')}.example.com`;

let t: TestApp;
let dns: TestDns;
beforeAll(async () => {
  t = await startApp();
  dns = await testDns();
}, 120_000);
afterAll(async () => t?.close());

describe('claiming a domain', () => {
  it('answers 201 with the TXT record to publish, random per claim', async () => {
    const a = await partnerAdmin(t);
    const domain = fresh();
    const res = await a.api.post('/domains', { domain });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      domain,
      partnerId: a.partner.id,
      orgId: null,
      status: 'pending',
      txtName: `_gatehouse-challenge.${domain}`,
      verifiedAt: null,
    });
    expect(res.body.txtValue).toMatch(/^gatehouse-verification=[A-Za-z0-9_-]{32}$/);
    const b = await partnerAdmin(t);
    const other = await b.api.post('/domains', { domain });
    expect(other.status).toBe(201);
    expect(other.body.txtValue).not.toBe(res.body.txtValue);
    expect((await auditRecords(t, 'domain.create', res.body.id)).length).toBe(1);
  });

  it('lower-cases, drops a trailing dot and stores an internationalised name as punycode', async () => {
    const a = await partnerAdmin(t);
    const tag = randomBytes(3).toString('hex');
    const upper = await a.api.post('/domains', { domain: `Corp-${tag}.Example.COM.` });
    expect(upper.body.domain).toBe(`corp-${tag}.example.com`);
    const idn = await a.api.post('/domains', { domain: 'Bücher.example' });
    expect(idn.status, idn.text).toBe(201);
    expect(idn.body.domain).toBe('xn--bcher-kva.example');
    expect(idn.body.txtName).toBe(`_gatehouse-challenge.${idn.body.domain}`);
  });

  it.each([
    ['a bare TLD', 'com'],
    ['a registry suffix', 'co.uk'],
    ['a wildcard', '*.example.com'],
    ['an address', 'someone@example.com'],
    ['an IP address', '192.0.2.1'],
    ['a URL', 'https://example.com'],
    ['an empty string', ''],
    ['a label over 63 characters', `${'a'.repeat(64)}.example.com`],
    ['a leading hyphen', '-bad.example.com'],
    ['an underscore', 'bad_name.example.com'],
  ])('refuses %s with 400 and writes nothing', async (_what, domain) => {
    const a = await partnerAdmin(t);
    const res = await a.api.post('/domains', { domain });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect((await a.api.get('/domains')).body.data).toEqual([]);
  });

  it('refuses unknown fields and a non-string domain', async () => {
    const a = await partnerAdmin(t);
    expect((await a.api.raw.post('/domains', { domain: fresh(), status: 'verified' })).status).toBe(400);
    expect((await a.api.raw.post('/domains', { domain: 42 })).status).toBe(400);
  });

  it('one claim per domain within a partner: a second one is 409 domain_exists', async () => {
    const a = await partnerAdmin(t);
    const org = await createOrg(t, a.partner.id);
    const domain = fresh();
    expect((await a.api.post('/domains', { domain })).status).toBe(201);
    const again = await a.api.post('/domains', { domain, orgId: org.id });
    expect([again.status, again.body.code]).toEqual([409, 'domain_exists']);
  });

  it('a partner claims for its organisation; an organisation admin for its own, never for another', async () => {
    const a = await partnerAdmin(t);
    const org = await createOrg(t, a.partner.id);
    const forOrg = await a.api.post('/domains', { domain: fresh(), orgId: org.id });
    expect(forOrg.status).toBe(201);
    expect(forOrg.body.orgId).toBe(org.id);
    const admin = await signedInOrgMember(t, org);
    const own = await admin.api.post('/domains', { domain: fresh() });
    expect([own.status, own.body.orgId]).toEqual([201, org.id]);
    const other = await createOrg(t, a.partner.id);
    const elsewhere = await admin.api.post('/domains', { domain: fresh(), orgId: other.id });
    expect([elsewhere.status, elsewhere.body.code]).toEqual([404, 'not_found']);
  });

  it('needs settings:write: a technician is refused 403', async () => {
    const a = await partnerAdmin(t);
    const tech = await signedInPartnerMember(t, a.partner.id, { roleId: PARTNER_TECHNICIAN_ROLE_ID });
    const res = await tech.api.post('/domains', { domain: fresh() });
    expect(res.status).toBe(403);
    expect((await tech.api.get('/domains')).status).toBe(403);
  });

  it('a partner-level claim needs orgAccess all', async () => {
    const a = await partnerAdmin(t);
    const org = await createOrg(t, a.partner.id);
    const selected = await signedInPartnerMember(t, a.partner.id, { orgAccess: 'selected', orgIds: [org.id] });
    const res = await selected.api.post('/domains', { domain: fresh() });
    expect([res.status, res.body.code]).toEqual([403, 'full_org_access_required']);
    expect((await selected.api.post('/domains', { domain: fresh(), orgId: org.id })).status).toBe(201);
  });
});

describe('verifying a domain', () => {
  it('verifies when the TXT record is published, and only then', async () => {
    const a = await partnerAdmin(t);
    const claim = (await a.api.post('/domains', { domain: fresh() })).body;
    const missing = await a.api.post(`/domains/${claim.id}/verify`, {});
    expect([missing.status, missing.body.code]).toEqual([409, 'domain_not_verified']);
    expect(missing.body.txtName).toBe(claim.txtName);
    expect(dns.questions(claim.txtName as string)).toBeGreaterThan(0);

    dns.publish(claim.txtName, 'gatehouse-verification=someone-elses-value');
    const wrong = await a.api.post(`/domains/${claim.id}/verify`, {});
    expect([wrong.status, wrong.body.code]).toEqual([409, 'domain_not_verified']);

    dns.publish(claim.txtName, claim.txtValue);
    const ok = await a.api.post(`/domains/${claim.id}/verify`, {});
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.status).toBe('verified');
    expect(Date.parse(ok.body.verifiedAt ?? '')).not.toBeNaN();
    expect((await auditRecords(t, 'domain.verify', claim.id)).length).toBe(1);

    // Verified stays verified: asking again answers the same, without a second record.
    dns.unpublish(claim.txtName);
    const again = await a.api.post(`/domains/${claim.id}/verify`, {});
    expect([again.status, again.body.status]).toEqual([200, 'verified']);
    expect((await auditRecords(t, 'domain.verify', claim.id)).length).toBe(1);
  });

  it('a record split into several strings counts as one value', async () => {
    const a = await partnerAdmin(t);
    const claim = (await a.api.post('/domains', { domain: fresh() })).body;
    // dns2 sends an array as several <character-string>s of one record.
    dns.publish(claim.txtName, [claim.txtValue.slice(0, 10), claim.txtValue.slice(10)] as unknown as string);
    const ok = await a.api.post(`/domains/${claim.id}/verify`, {});
    expect(ok.status, ok.text).toBe(200);
  });

  it('an unreachable resolver answers 409 domain_not_verified (dns_unreachable), never a 500, and never hangs', async () => {
    const dead = await startApp({ DNS_SERVERS: '127.0.0.1:9' });
    try {
      const a = await partnerAdmin(dead);
      const claim = (await a.api.post('/domains', { domain: fresh() })).body;
      const started = Date.now();
      const res = await a.api.post(`/domains/${claim.id}/verify`, {});
      expect([res.status, res.body.code, errorBody(res).reason]).toEqual([
        409,
        'domain_not_verified',
        'dns_unreachable',
      ]);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await dead.close();
    }
  }, 60_000);

  it('an unknown id, or another partner’s claim, is 404', async () => {
    const a = await partnerAdmin(t);
    const b = await partnerAdmin(t);
    const claim = (await a.api.post('/domains', { domain: fresh() })).body;
    dns.publish(claim.txtName, claim.txtValue);
    const res = await b.api.post(`/domains/${claim.id}/verify`, {});
    expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    expect((await b.api.post('/domains/00000000-0000-4000-8000-00000000abcd/verify', {})).status).toBe(404);
    expect((await b.api.post('/domains/not-a-uuid/verify', {})).status).toBe(400);
  });
});

describe('listing and deleting', () => {
  it('a partner lists its own and its organisations’ domains; an organisation admin only its own', async () => {
    const a = await partnerAdmin(t);
    const orgX = await createOrg(t, a.partner.id);
    const orgY = await createOrg(t, a.partner.id);
    const mine = (await a.api.post('/domains', { domain: fresh() })).body;
    const x = (await a.api.post('/domains', { domain: fresh(), orgId: orgX.id })).body;
    const y = (await a.api.post('/domains', { domain: fresh(), orgId: orgY.id })).body;
    const b = await partnerAdmin(t);
    await b.api.post('/domains', { domain: fresh() });

    const all = await a.api.get('/domains');
    expect(all.status).toBe(200);
    expect(all.body.data.map((d: { id: string }) => d.id).sort()).toEqual([mine.id, x.id, y.id].sort());
    const onlyX = await a.api.get('/domains', { query: { orgId: orgX.id } });
    expect(onlyX.body.data.map((d: { id: string }) => d.id)).toEqual([x.id]);

    const adminX = await signedInOrgMember(t, orgX);
    const seen = await adminX.api.get('/domains');
    expect(seen.body.data.map((d: { id: string }) => d.id)).toEqual([x.id]);
    expect((await adminX.api.get('/domains', { query: { orgId: orgY.id } })).status).toBe(404);
    expect((await adminX.api.delete(`/domains/${y.id}`)).status).toBe(404);
    expect((await adminX.api.delete(`/domains/${mine.id}`)).status).toBe(404);
  });

  it('pages by domain name', async () => {
    const a = await partnerAdmin(t);
    for (let i = 0; i < 3; i++) await a.api.post('/domains', { domain: fresh() });
    const first = await a.api.get('/domains', { query: { limit: '2' } });
    expect(first.body.data.length).toBe(2);
    const second = await a.api.get('/domains', { query: { limit: '2', cursor: first.body.nextCursor ?? '' } });
    expect(second.body.data.length).toBe(1);
    expect(second.body.nextCursor).toBeNull();
    const names = [...first.body.data, ...second.body.data].map((d: { domain: string }) => d.domain);
    expect(names).toEqual([...names].sort());
    expect((await a.api.get('/domains', { query: { cursor: 'garbage' } })).status).toBe(400);
  });

  it('deleting a claim removes it, and the domain may be claimed again with a new value', async () => {
    const a = await partnerAdmin(t);
    const proven = await proveDomain(a.api, fresh());
    const res = await a.api.delete(`/domains/${proven.id}`);
    expect(res.status, res.text).toBe(200);
    expect((await a.api.get('/domains')).body.data).toEqual([]);
    expect((await auditRecords(t, 'domain.delete', proven.id)).length).toBe(1);
    const again = await a.api.post('/domains', { domain: proven.domain });
    expect(again.status).toBe(201);
    expect(again.body.status).toBe('pending');
    expect(again.body.txtValue).not.toBe(proven.txtValue);
  });
});
