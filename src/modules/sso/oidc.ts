// The OpenID Connect client side: discovery through the one outbound guard (src/platform/outbound.ts: no private
// addresses, no plain http, unless the reach allows loopback or anything), with configurations cached briefly.
// openid-client is imported on the first discovery (not needed to start).
import type * as client from 'openid-client';
import { assertPublicUrl, type OutboundReach, publicFetch } from '../../platform/outbound.js';

export interface ProviderSettings {
  id: string;
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  updatedAt: Date;
}

export class OidcClients {
  private readonly cache = new Map<string, { at: number; config: Promise<client.Configuration> }>();
  constructor(private readonly reach: OutboundReach) {}

  private guardedFetch: client.CustomFetch = async (url, options) =>
    publicFetch(url, options as RequestInit, this.reach, 'The issuer');

  async discover(issuer: string, clientId: string, clientSecret: string | null): Promise<client.Configuration> {
    const url = new URL(issuer);
    await assertPublicUrl(url, 'The issuer', this.reach);
    const client = await import('openid-client');
    return client.discovery(
      url,
      clientId,
      clientSecret ? { client_secret: clientSecret } : undefined,
      clientSecret ? client.ClientSecretPost(clientSecret) : client.None(),
      {
        [client.customFetch]: this.guardedFetch,
        // openid-client skips the ID token's signature by default (TLS stands in for it); the spec wants it checked.
        // An http issuer passed the guard only where the reach allows it (loopback in development mode, tests).
        execute:
          url.protocol === 'http:'
            ? [client.enableNonRepudiationChecks, client.allowInsecureRequests]
            : [client.enableNonRepudiationChecks],
        timeout: 10,
      },
    );
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
