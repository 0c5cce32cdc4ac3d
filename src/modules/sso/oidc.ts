// The OpenID Connect client side: discovery through a fetch that refuses private addresses and plain http
// (unless SSO_ALLOW_INSECURE_ISSUERS=true, for tests), with discovered configurations cached briefly.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import * as client from 'openid-client';

export class InsecureIssuerError extends Error {}

/**
 * Loopback, private, link-local, CGNAT, unspecified, multicast and reserved ranges. A BlockList also matches the
 * IPv4-mapped and IPv4-compatible IPv6 forms of them in every spelling (the URL parser writes [::ffff:127.0.0.1]
 * as [::ffff:7f00:1], which a string prefix test misses).
 */
const PRIVATE = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16], ['224.0.0.0', 3]] as const) PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 96], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]] as const) PRIVATE.addSubnet(net, bits, 'ipv6');

export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return true; // not an address: never treat it as a public one
  return PRIVATE.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** Refuses a URL that is not https or resolves to a private address. */
export async function assertPublicUrl(url: URL): Promise<void> {
  if (url.protocol !== 'https:') throw new InsecureIssuerError('The issuer must use https.');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  if (addresses.length === 0 || addresses.some(isPrivateAddress)) throw new InsecureIssuerError('The issuer resolves to a private address.');
}

/**
 * The one outbound fetch of the SSO module (OpenID discovery, JWKS, tokens, SAML metadata): the URL is checked first
 * (https, public address) unless SSO_ALLOW_INSECURE_ISSUERS=true, and redirects are refused (they would skip the check).
 */
export async function publicFetch(url: string | URL, init: RequestInit, allowInsecure: boolean): Promise<Response> {
  if (!allowInsecure) await assertPublicUrl(new URL(url));
  return fetch(url, { ...init, redirect: 'error' });
}

export interface ProviderSettings {
  id: string;
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  updatedAt: Date;
}

export class OidcClients {
  private readonly cache = new Map<string, { at: number; config: Promise<client.Configuration> }>();
  constructor(private readonly allowInsecure: boolean) {}

  private guardedFetch: client.CustomFetch = async (url, options) => publicFetch(url, options as RequestInit, this.allowInsecure);

  async discover(issuer: string, clientId: string, clientSecret: string | null): Promise<client.Configuration> {
    const url = new URL(issuer);
    if (!this.allowInsecure) await assertPublicUrl(url);
    return client.discovery(url, clientId, clientSecret ? { client_secret: clientSecret } : undefined, clientSecret ? client.ClientSecretPost(clientSecret) : client.None(), {
      [client.customFetch]: this.guardedFetch,
      // openid-client skips the ID token's signature by default (TLS stands in for it); the spec wants it checked.
      execute: this.allowInsecure ? [client.enableNonRepudiationChecks, client.allowInsecureRequests] : [client.enableNonRepudiationChecks],
      timeout: 10,
    });
  }

  /** A discovered configuration, reused for 10 minutes or until the provider's settings change. */
  config(p: ProviderSettings): Promise<client.Configuration> {
    const key = `${p.id}:${p.updatedAt.getTime()}`;
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < 600_000) return hit.config;
    const config = this.discover(p.issuer, p.clientId, p.clientSecret);
    config.catch(() => this.cache.delete(key));
    this.cache.set(key, { at: Date.now(), config });
    return config;
  }
}
