// SSO provider test (POST .../test): OIDC discovery, or a SAML IdP's metadata and certificates read again.
import type { Deps } from '../../deps.js';
import type { Target } from '../../db/tenant-filter.js';
import { OutboundRefusedError } from '../../platform/outbound.js';
import { findProvider, openSecret } from './providers-view.js';
import { type ProviderRow, updateProviderRow } from './repo.js';
import { certificateInfo, fetchMetadata, parseIdpMetadata, SamlXmlError } from './saml.js';

type Row = ProviderRow;

export async function testProvider(deps: Deps, t: Target, id: string) {
  const p = await findProvider(deps.db, t, id);
  if (p.type === 'saml') return testSamlProvider(deps, p);
  try {
    const config = await deps.oidc.discover(p.issuer, p.clientId, openSecret(deps, p));
    const m = config.serverMetadata();
    await updateProviderRow(deps.db, p.id, { lastTestedOkAt: deps.clock.now() });
    return {
      ok: true as const,
      issuer: m.issuer,
      authorizationEndpoint: m.authorization_endpoint ?? '',
      tokenEndpoint: m.token_endpoint ?? '',
      jwksUri: m.jwks_uri ?? '',
    };
  } catch (err) {
    return { ok: false as const, error: (err as Error).message.slice(0, 300) };
  }
}

/**
 * SAML: the metadata is fetched again (from metadataUrl) or re-read, and each signing certificate's expiry reported.
 * Fetched metadata that still names the same entity brings its certificates and SSO URL in (an IdP's key rollover).
 */
async function testSamlProvider(deps: Deps, p: Row) {
  try {
    const xml = p.metadataUrl ? await fetchMetadata(deps, p.metadataUrl) : (p.metadataXml ?? '');
    const md = parseIdpMetadata(xml, deps.config.ssoAllowInsecureIssuers);
    if (md.entityId !== p.issuer)
      return {
        ok: false as const,
        error: `The metadata now names the entity ${md.entityId.slice(0, 200)}; save the metadata again to accept it.`,
      };
    const certificates = certificateInfo(md.certs, deps.clock.now());
    if (certificates.every((c) => c.expired))
      return { ok: false as const, error: 'Every signing certificate in the metadata has expired.' };
    await updateProviderRow(deps.db, p.id, {
      lastTestedOkAt: deps.clock.now(),
      ...(p.metadataUrl ? { metadataXml: xml, idpCerts: md.certs, idpSsoUrl: md.ssoUrl } : {}),
    });
    return { ok: true as const, type: 'saml' as const, issuer: md.entityId, ssoUrl: md.ssoUrl, certificates };
  } catch (err) {
    return {
      ok: false as const,
      error:
        err instanceof SamlXmlError || err instanceof OutboundRefusedError
          ? err.message
          : 'The metadata could not be fetched.',
    };
  }
}
