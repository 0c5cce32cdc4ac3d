// The one outbound-request guard (OpenID discovery, JWKS and tokens, SAML metadata, audit webhooks): https only, no
// private, loopback or link-local address, no redirects. Each caller passes its own test-only switch
// (SSO_ALLOW_INSECURE_ISSUERS, WEBHOOKS_ALLOW_INSECURE) that lifts the first two checks, never the third.
// The address is checked again where the connection is made (DNS rebinding): the socket connects to the address the
// check passed, never to a second answer of the resolver.
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { BlockList, isIP } from 'node:net';
import { createRequire } from 'node:module';
import type { Agent } from 'undici';

/** The URL was refused before any request: the message names what and why, fit for a field error. */
export class OutboundRefusedError extends Error {}

/**
 * Loopback, private, link-local, CGNAT, unspecified, multicast and reserved ranges. A BlockList also matches the
 * IPv4-mapped and IPv4-compatible IPv6 forms of them in every spelling (the URL parser writes [::ffff:127.0.0.1]
 * as [::ffff:7f00:1], which a string prefix test misses).
 */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 3],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv6');

export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return true; // not an address: never treat it as a public one
  return PRIVATE.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Refuses a URL that is not https or resolves to a private address (`what` names it in the message: "The issuer").
 * A host that does not resolve throws the resolver's error, not OutboundRefusedError.
 */
export async function assertPublicUrl(url: URL, what = 'The URL'): Promise<void> {
  if (url.protocol !== 'https:') throw new OutboundRefusedError(`${what} must use https.`);
  if (!(await publicAddressesOf(url.hostname)))
    throw new OutboundRefusedError(`${what} resolves to a private address.`);
}

/**
 * fetch through the guard: the URL is checked first (https, public address) unless `allowInsecure`, and redirects
 * are refused (they would skip the check). Callers give their own timeout in `init.signal`.
 */
export async function publicFetch(
  url: string | URL,
  init: RequestInit,
  allowInsecure: boolean,
  what?: string,
): Promise<Response> {
  if (!allowInsecure) await assertPublicUrl(new URL(url), what);
  const guarded: RequestInit & { dispatcher?: Agent } = { ...init, redirect: 'error' };
  if (!allowInsecure) guarded.dispatcher = publicOnlyAgent();
  return fetch(url, guarded);
}

export type Resolve = (host: string) => Promise<LookupAddress[]>;
const systemResolve: Resolve = (host) => lookup(host, { all: true, verbatim: true });

/** The host's addresses (an address literal is its own), or null when it has none or any of them is private. */
async function publicAddressesOf(host: string, resolve: Resolve = systemResolve): Promise<LookupAddress[] | null> {
  const name = host.replace(/^\[|\]$/g, '');
  const family = isIP(name);
  const addresses = family ? [{ address: name, family }] : await resolve(name);
  return addresses.length === 0 || addresses.some((a) => isPrivateAddress(a.address)) ? null : addresses;
}

/**
 * The socket's own lookup: resolves the host once, refuses when any answer is private, and hands the connection the
 * addresses it checked. A name that answered a public address to assertPublicUrl and a private one now is refused here.
 */
export function publicOnlyLookup(resolve: Resolve = systemResolve): LookupFunction {
  return (host, options, callback) => {
    const reply = callback as unknown as (
      err: Error | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void;
    publicAddressesOf(host, resolve).then(
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

/** One keep-alive pool for every guarded request; built on first use. */
let agent: Agent | undefined;
export function publicOnlyAgent(resolve?: Resolve): Agent {
  // undici (~110 files) is loaded by the first guarded request, not at start; synchronously, as its callers are.
  const { Agent } = createRequire(import.meta.url)('undici') as typeof import('undici');
  if (resolve) return new Agent({ connect: { lookup: publicOnlyLookup(resolve) } });
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
