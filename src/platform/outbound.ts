// The one outbound-request guard (OpenID discovery, JWKS and tokens, SAML metadata, audit webhooks): https only, global
// unicast addresses only, no redirects. Each caller passes its reach: `public`; `loopback` (development mode: this
// machine too, over http or https, to try SSO and webhooks on a laptop); `any` (the test-only switches
// SSO_ALLOW_INSECURE_ISSUERS, WEBHOOKS_ALLOW_INSECURE lift the first two checks). Redirects are refused in every reach.
// The address is checked again where the connection is made (DNS rebinding): the socket connects to the address the
// check passed, never to a second answer of the resolver.
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { createRequire } from 'node:module';
import ipaddr from 'ipaddr.js';
import type { Agent } from 'undici';

/** Where a guarded request may go (see the head of this file). */
export type OutboundReach = 'public' | 'loopback' | 'any';

/** The URL was refused before any request: the message names what and why, fit for a field error. */
export class OutboundRefusedError extends Error {}

/**
 * Every IANA special-purpose block (the IPv4 and IPv6 Special-Purpose Address Registries, RFC 6890 and successors),
 * multicast, and the IPv6 space outside global unicast (2000::/3). An address in none of them is also required to be
 * `unicast` for ipaddr.js, so a block either list knows is refused. The IPv4-mapped form is judged by its IPv4
 * address; the translation and tunnel forms (NAT64, 6to4, Teredo) are refused whole: they carry an IPv4 address the
 * receiving relay would reach, public or not.
 */
export const REFUSED_BLOCKS: readonly (readonly [cidr: string, why: string])[] = [
  ['0.0.0.0/8', 'this network'],
  ['10.0.0.0/8', 'private use'],
  ['100.64.0.0/10', 'shared address space (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata)'],
  ['172.16.0.0/12', 'private use'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.31.196.0/24', 'AS112-v4'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast'],
  ['192.168.0.0/16', 'private use'],
  ['192.175.48.0/24', 'AS112 direct delegation'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'limited broadcast'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::ffff:0:0/96', 'IPv4-mapped (judged by the IPv4 address it carries, before this table)'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['64:ff9b::/96', 'NAT64 well-known prefix'],
  ['64:ff9b:1::/48', 'NAT64 local-use prefix'],
  ['100::/64', 'discard-only'],
  ['2001::/23', 'IETF protocol assignments'],
  ['2001::/32', 'Teredo'],
  ['2001:2::/48', 'benchmarking'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['2620:4f:8000::/48', 'AS112 direct delegation'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing SIDs'],
  ['fc00::/7', 'unique local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
];

const REFUSED = REFUSED_BLOCKS.map(([cidr]) => ipaddr.parseCIDR(cidr));
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** True unless `ip` is a global unicast address: anything not an address literal counts as private. */
export function isPrivateAddress(ip: string): boolean {
  if (isIP(ip) === 0) return true; // not an address: never treat it as a public one
  let addr = ipaddr.parse(ip);
  if (addr instanceof ipaddr.IPv6 && addr.isIPv4MappedAddress()) addr = addr.toIPv4Address();
  if (addr.range() !== 'unicast') return true;
  if (addr instanceof ipaddr.IPv6 && !addr.match(GLOBAL_UNICAST_V6)) return true;
  return REFUSED.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
}

/**
 * Refuses a URL that is not https or resolves to a private address (`what` names it in the message: "The issuer").
 * A host that does not resolve throws the resolver's error, not OutboundRefusedError.
 */
export async function assertPublicUrl(url: URL, what = 'The URL', reach: OutboundReach = 'public'): Promise<void> {
  if (reach === 'any') return;
  if (reach === 'loopback' && (await loopbackOnly(url.hostname))) return;
  if (url.protocol !== 'https:') throw new OutboundRefusedError(`${what} must use https.`);
  if (!(await publicAddressesOf(url.hostname)))
    throw new OutboundRefusedError(`${what} resolves to a private address.`);
}

const isLoopback = (ip: string) => {
  if (isIP(ip) === 0) return false;
  let addr = ipaddr.parse(ip);
  if (addr instanceof ipaddr.IPv6 && addr.isIPv4MappedAddress()) addr = addr.toIPv4Address();
  return addr.range() === 'loopback';
};

/** True when every address of the host is a loopback address (this machine), and it has one. */
async function loopbackOnly(host: string, resolve: Resolve = systemResolve): Promise<boolean> {
  const name = host.replace(/^\[|\]$/g, '');
  const family = isIP(name);
  const addresses = family ? [{ address: name, family }] : await resolve(name).catch(() => []);
  return addresses.length > 0 && addresses.every((a) => isLoopback(a.address));
}

/**
 * fetch through the guard: the URL is checked first (https, public address) unless `allowInsecure`, and redirects
 * are refused (they would skip the check). Callers give their own timeout in `init.signal`.
 */
export async function publicFetch(
  url: string | URL,
  init: RequestInit,
  reach: OutboundReach,
  what?: string,
): Promise<Response> {
  await assertPublicUrl(new URL(url), what, reach);
  const guarded: RequestInit & { dispatcher?: Agent } = { ...init, redirect: 'error' };
  if (reach !== 'any') guarded.dispatcher = publicOnlyAgent(undefined, reach === 'loopback');
  return fetch(url, guarded);
}

export type Resolve = (host: string) => Promise<LookupAddress[]>;
const systemResolve: Resolve = (host) => lookup(host, { all: true, verbatim: true });

/**
 * The host's addresses (an address literal is its own), or null when it has none or any of them is private
 * (with `loopback`, addresses that are all loopback are accepted too).
 */
async function publicAddressesOf(
  host: string,
  resolve: Resolve = systemResolve,
  loopback = false,
): Promise<LookupAddress[] | null> {
  const name = host.replace(/^\[|\]$/g, '');
  const family = isIP(name);
  const addresses = family ? [{ address: name, family }] : await resolve(name);
  if (addresses.length === 0) return null;
  if (loopback && addresses.every((a) => isLoopback(a.address))) return addresses;
  return addresses.some((a) => isPrivateAddress(a.address)) ? null : addresses;
}

/**
 * The socket's own lookup: resolves the host once, refuses when any answer is private, and hands the connection the
 * addresses it checked. A name that answered a public address to assertPublicUrl and a private one now is refused here.
 */
export function publicOnlyLookup(resolve: Resolve = systemResolve, loopback = false): LookupFunction {
  return (host, options, callback) => {
    const reply = callback as unknown as (
      err: Error | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void;
    publicAddressesOf(host, resolve, loopback).then(
      (addresses) => {
        if (!addresses) {
          reply(
            Object.assign(new OutboundRefusedError('The host resolves to a private address.'), {
              code: 'EPRIVATEADDRESS',
            }),
            '',
            0,
          );
        } else if ((options as { all?: boolean }).all) reply(null, addresses);
        else reply(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: Error) => reply(err, '', 0),
    );
  };
}

/** One keep-alive pool for every guarded request (and one for the loopback reach); built on first use. */
let agent: Agent | undefined;
let loopbackAgent: Agent | undefined;
export function publicOnlyAgent(resolve?: Resolve, loopback = false): Agent {
  // undici (~110 files) is loaded by the first guarded request, not at start; synchronously, as its callers are.
  const { Agent } = createRequire(import.meta.url)('undici') as typeof import('undici');
  if (resolve) return new Agent({ connect: { lookup: publicOnlyLookup(resolve, loopback) } });
  if (loopback) {
    loopbackAgent ??= new Agent({ connect: { lookup: publicOnlyLookup(systemResolve, true) } });
    return loopbackAgent;
  }
  agent ??= new Agent({ connect: { lookup: publicOnlyLookup() } });
  return agent;
}

/** Why a guarded request failed, in a line fit for an operator (no URL, no secret). */
export function outboundFailure(err: unknown): string {
  if (err instanceof OutboundRefusedError) return `refused: ${err.message}`;
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timed out';
  const cause = e?.cause?.message ?? '';
  if (/redirect/i.test(cause)) return 'refused: the receiver answered with a redirect';
  if (e?.cause?.code === 'EPRIVATEADDRESS') return `refused: ${e.cause.message}`;
  if (e?.cause?.code) return `connection failed (${e.cause.code})`;
  if ((e as { code?: string })?.code) return `connection failed (${(e as { code?: string }).code})`;
  return (e?.message ?? 'request failed').slice(0, 200);
}
