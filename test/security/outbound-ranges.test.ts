// The outbound guard allows global unicast only. One case per special-purpose block: the block must be in the guard's
// table (removing a row fails here), and its first, middle and last addresses are refused, in every spelling the
// resolver or the URL parser may hand over. The attacker's forms (NAT64, 6to4, Teredo, IPv4-mapped, 198.18/15) are
// then tried through the webhook API, where an SSRF would start.
import ipaddr from 'ipaddr.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPrivateAddress, REFUSED_BLOCKS } from '../../src/platform/outbound.js';
import { startApp, type TestApp } from '../support/app.js';
import { createPartner, signedInPartnerMember, type SignedInMember } from '../support/fixtures.js';

/** The IANA special-purpose registries (IPv4 and IPv6), multicast, and what lies outside 2000::/3. */
const BLOCKS = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.31.196.0/24',
  '192.52.193.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '192.175.48.0/24',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '255.255.255.255/32',
  '::/128',
  '::1/128',
  '::ffff:0:0/96',
  '::/96',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '100::/64',
  '2001::/23',
  '2001::/32',
  '2001:2::/48',
  '2001:db8::/32',
  '2002::/16',
  '2620:4f:8000::/48',
  '3fff::/20',
  '5f00::/16',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];

function edges(cidr: string): string[] {
  const v4 = cidr.includes('.');
  const cls = v4 ? ipaddr.IPv4 : ipaddr.IPv6;
  const first = cls.networkAddressFromCIDR(cidr).toByteArray();
  const last = cls.broadcastAddressFromCIDR(cidr).toByteArray();
  const middle = first.map((b, i) => (b + (last[i] ?? b)) >> 1);
  const firstOne = [...first.slice(0, -1), first.at(-1)! | 1];
  return [first, firstOne, middle, last].map((bytes) => ipaddr.fromByteArray(bytes).toString());
}

describe('the outbound guard refuses every special-purpose block (one case per block)', () => {
  it.each(BLOCKS)('%s is in the table and refused at its edges', (cidr) => {
    expect(REFUSED_BLOCKS.map(([c]) => c)).toContain(cidr);
    // The mapped block is judged by the IPv4 address it carries: its refused members are the private ones.
    const probes = cidr === '::ffff:0:0/96' ? ['::ffff:127.0.0.1', '::ffff:a00:1', '::ffff:a9fe:a9fe'] : edges(cidr);
    for (const ip of probes) expect(isPrivateAddress(ip), `${ip} in ${cidr}`).toBe(true);
  });

  it('the table holds nothing the test does not name (a new row comes with its case)', () => {
    expect(REFUSED_BLOCKS.map(([c]) => c).sort()).toEqual([...BLOCKS].sort());
  });

  it('outside 2000::/3 nothing is global unicast, even where ipaddr.js says unicast', () => {
    for (const ip of ['4000::1', '8000::1', 'c000::1', 'e000::1', '1::1', '1000::1'])
      expect(isPrivateAddress(ip), ip).toBe(true);
  });

  it('the translated and tunnelled forms of a public IPv4 address are refused whole; the mapped form is judged by it', () => {
    // 1.1.1.1 carried in NAT64, 6to4 and Teredo: the relay, not the guard, would decide where it goes.
    for (const ip of [
      '64:ff9b::101:101',
      '64:ff9b:1::101:101',
      '2002:101:101::1',
      '2001:0:4136:e378:8000:63bf:fefe:fefe',
    ])
      expect(isPrivateAddress(ip), ip).toBe(true);
    expect(isPrivateAddress('::ffff:1.1.1.1')).toBe(false);
    expect(isPrivateAddress('::ffff:10.0.0.1')).toBe(true);
  });

  it('global unicast passes, right next to the blocks too (the guard is not refusing everything)', () => {
    for (const ip of [
      '1.1.1.1',
      '8.8.8.8',
      '93.184.215.14',
      '100.63.255.255',
      '100.128.0.0',
      '198.17.255.255',
      '198.20.0.0',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2001:200::1',
      '2003::1',
      '2620:4f:8001::1',
      '3fff:1000::1',
    ])
      expect(isPrivateAddress(ip), ip).toBe(false);
  });

  it('anything that is not an address literal counts as private', () => {
    for (const v of ['', 'localhost', '127.1', '0x7f000001', '1.2.3', 'fe80::1%eth0'])
      expect(isPrivateAddress(v), v).toBe(true);
  });
});

describe('a webhook aimed at a translated, tunnelled or benchmarking address is refused through HTTP', () => {
  let t: TestApp;
  let admin: SignedInMember;
  beforeAll(async () => {
    t = await startApp();
    admin = await signedInPartnerMember(t, (await createPartner(t)).id);
  }, 120_000);
  afterAll(async () => t?.close());

  it.each([
    ['NAT64 of the metadata address', 'https://[64:ff9b::a9fe:a9fe]/hook'],
    ['NAT64 local-use prefix', 'https://[64:ff9b:1::a00:1]/hook'],
    ['6to4 of loopback', 'https://[2002:7f00:1::1]/hook'],
    ['Teredo', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook'],
    ['benchmarking 198.18/15', 'https://198.18.0.1/hook'],
    ['benchmarking 198.19.x', 'https://198.19.255.254/hook'],
    ['documentation prefix', 'https://[2001:db8::1]/hook'],
    ['IPv4-mapped private', 'https://[::ffff:10.0.0.1]/hook'],
  ])('%s: 400 validation_failed on url, nothing stored', async (_name, url) => {
    const res = await admin.api.post('/webhooks', { url, events: ['*'] });
    expect([res.status, res.body.code], url).toEqual([400, 'validation_failed']);
    expect(Object.keys(res.body.details.fieldErrors)).toEqual(['url']);
    expect((await admin.api.get('/webhooks')).body.data).toEqual([]);
  });

  it('a global unicast literal is accepted (the refusals above are the address, not the request)', async () => {
    const res = await admin.api.post('/webhooks', { url: 'https://93.184.215.14/hook', events: ['nothing.'] });
    expect(res.status, res.text).toBe(201);
  });
});
