// The SAML 2.0 service provider's XML side: reading an IdP's metadata, our SP metadata, and the @node-saml/node-saml
// instance that builds AuthnRequests and verifies responses (signatures, audience, issuer, time conditions,
// InResponseTo). Nothing here parses a signature: the library does. XML with a DOCTYPE or an entity declaration is
// refused before any parser sees it.
import { X509Certificate } from 'node:crypto';
// @node-saml/node-saml (with xml-crypto, ~15 MB and ~0.1 s to load) is imported when a SAML provider is used.
import type { CacheProvider, SAML } from '@node-saml/node-saml';
import { DOMParser } from '@xmldom/xmldom';
import type { Deps } from '../../deps.js';
import { publicFetch } from '../../platform/outbound.js';

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
/** Metadata larger than this is refused (an IdP's is a few kilobytes; aggregates of a federation are not accepted). */
export const MAX_METADATA_BYTES = 512 * 1024;
/** How far the IdP's clock may be from ours. */
export const CLOCK_SKEW_MS = 60_000;

/** Why metadata or a response could not be read; the message is safe to show an administrator. */
export class SamlXmlError extends Error {}

/** DOCTYPE and ENTITY declarations (internal or external entities, billion laughs) never reach a parser. */
export function refuseDtd(xml: string): void {
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new SamlXmlError('XML with a DOCTYPE or entity declaration is refused.');
}

/** A DOM of XML that passed refuseDtd; any parser error or warning fails it. */
export function parseXml(xml: string): Document {
  refuseDtd(xml);
  const fail = (msg: string) => {
    throw new SamlXmlError(`The XML is not well-formed: ${String(msg).split('\n')[0]!.slice(0, 200)}`);
  };
  const doc = new DOMParser({ errorHandler: { warning: fail, error: fail, fatalError: fail } }).parseFromString(
    xml,
    'text/xml',
  );
  if (!doc?.documentElement) throw new SamlXmlError('The XML has no root element.');
  return doc as unknown as Document;
}

const children = (el: Element, ns: string, name: string): Element[] =>
  Array.from(el.childNodes).filter(
    (n): n is Element => n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === name,
  );

/** A certificate as its base64 DER body (what metadata and node-saml carry), if it parses as X.509. */
function certBody(text: string): string | null {
  const body = text.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, '');
  if (!/^[A-Za-z0-9+/]+=*$/.test(body)) return null;
  try {
    new X509Certificate(Buffer.from(body, 'base64'));
    return body;
  } catch {
    return null;
  }
}

export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  /** Base64 DER bodies of the signing certificates, in document order (several during a rollover). */
  certs: string[];
}

/** The IdP's entity id, its HTTP-Redirect single sign-on URL and its signing certificates. */
export function parseIdpMetadata(xml: string, allowInsecure: boolean): IdpMetadata {
  if (Buffer.byteLength(xml) > MAX_METADATA_BYTES) throw new SamlXmlError('The metadata is larger than 512 KiB.');
  const root = parseXml(xml).documentElement;
  const entities =
    root.namespaceURI === MD && root.localName === 'EntityDescriptor'
      ? [root]
      : root.namespaceURI === MD && root.localName === 'EntitiesDescriptor'
        ? children(root, MD, 'EntityDescriptor')
        : [];
  const entity = entities.find((e) => children(e, MD, 'IDPSSODescriptor').length > 0);
  if (!entity) throw new SamlXmlError('The metadata has no EntityDescriptor with an IDPSSODescriptor.');
  const entityId = entity.getAttribute('entityID')?.trim() ?? '';
  if (!entityId || entityId.length > 2048) throw new SamlXmlError('The EntityDescriptor has no usable entityID.');
  const idp = children(entity, MD, 'IDPSSODescriptor')[0]!;
  const sso = children(idp, MD, 'SingleSignOnService').find((s) => s.getAttribute('Binding') === REDIRECT_BINDING);
  const ssoUrl = sso?.getAttribute('Location')?.trim() ?? '';
  if (!ssoUrl) throw new SamlXmlError('The IdP offers no SingleSignOnService with the HTTP-Redirect binding.');
  let parsed: URL;
  try {
    parsed = new URL(ssoUrl);
  } catch {
    throw new SamlXmlError('The SingleSignOnService Location is not a URL.');
  }
  if (ssoUrl.length > 2048 || !(parsed.protocol === 'https:' || (allowInsecure && parsed.protocol === 'http:')))
    throw new SamlXmlError('The SingleSignOnService Location must be an https URL.');
  const certs: string[] = [];
  for (const kd of children(idp, MD, 'KeyDescriptor')) {
    const use = kd.getAttribute('use');
    if (use && use !== 'signing') continue;
    for (const info of children(kd, DS, 'KeyInfo'))
      for (const data of children(info, DS, 'X509Data'))
        for (const c of children(data, DS, 'X509Certificate')) {
          const body = certBody(c.textContent ?? '');
          if (!body) throw new SamlXmlError('A signing certificate in the metadata is not a valid X.509 certificate.');
          if (!certs.includes(body)) certs.push(body);
        }
  }
  if (!certs.length) throw new SamlXmlError('The metadata names no signing certificate.');
  if (certs.length > 10) throw new SamlXmlError('The metadata names more than 10 signing certificates.');
  return { entityId, ssoUrl, certs };
}

/** Expiry of each signing certificate, for POST /sso/providers/:id/test. */
export function certificateInfo(certs: string[], now: Date) {
  return certs.map((body) => {
    const c = new X509Certificate(Buffer.from(body, 'base64'));
    const notAfter = new Date(c.validTo);
    return {
      subject: c.subject.replace(/\n/g, ', ').slice(0, 500),
      notBefore: new Date(c.validFrom).toISOString(),
      notAfter: notAfter.toISOString(),
      expired: notAfter <= now,
      fingerprintSha256: c.fingerprint256,
    };
  });
}

/** Fetches an IdP's metadata through the SSO module's one outbound fetch (https, public address, no redirects). */
export async function fetchMetadata(deps: Deps, url: string): Promise<string> {
  const res = await publicFetch(
    url,
    {
      headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' },
      signal: AbortSignal.timeout(10_000),
    },
    deps.config.ssoOutbound,
    'The metadata URL',
  );
  if (!res.ok) throw new SamlXmlError(`The metadata URL answered ${res.status}.`);
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_METADATA_BYTES) throw new SamlXmlError('The metadata is larger than 512 KiB.');
  const body = await res.text();
  if (Buffer.byteLength(body) > MAX_METADATA_BYTES) throw new SamlXmlError('The metadata is larger than 512 KiB.');
  return body;
}

export const acsUrl = (deps: Deps) => `${deps.config.publicUrl}/api/v1/sso/saml/acs`;
/** Our entity id at the IdP is the URL of our metadata for this provider (one SP per provider). */
export const spMetadataUrl = (deps: Deps, providerId: string) =>
  `${deps.config.publicUrl}/api/v1/sso/saml/${providerId}/metadata`;
export const samlReturnUrl = (deps: Deps) => `${deps.config.publicUrl}/api/v1/sso/saml/return`;

export interface SamlProvider {
  id: string;
  issuer: string;
  idpSsoUrl: string | null;
  idpCerts: string[];
}

const noCache: CacheProvider = {
  saveAsync: async () => null,
  getAsync: async () => null,
  removeAsync: async () => null,
};

/**
 * The library for one provider. `requestId` names the AuthnRequest being built; `knownRequest` answers whether an
 * InResponseTo is one we sent (the SSO session row decides, so it works on any instance).
 */
export async function samlFor(
  deps: Deps,
  p: SamlProvider,
  opts: { requestId?: string; knownRequest?: { id: string; createdAt: Date } } = {},
): Promise<SAML> {
  const known = opts.knownRequest;
  const { SAML, ValidateInResponseTo } = await import('@node-saml/node-saml');
  return new SAML({
    entryPoint: p.idpSsoUrl ?? undefined,
    issuer: spMetadataUrl(deps, p.id),
    audience: spMetadataUrl(deps, p.id),
    callbackUrl: acsUrl(deps),
    idpCert: p.idpCerts,
    idpIssuer: p.issuer,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: 10 * 60 * 1000,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    signatureAlgorithm: 'sha256',
    generateUniqueId: () => opts.requestId ?? '_unused',
    cacheProvider: known
      ? { ...noCache, getAsync: async (key) => (key === known.id ? known.createdAt.toISOString() : null) }
      : noCache,
  });
}

/** Our SP metadata for a provider: entity id, the ACS (HTTP-POST), signed assertions wanted, no SP key. */
export const spMetadataXml = async (deps: Deps, p: SamlProvider) =>
  (await samlFor(deps, p)).generateServiceProviderMetadata(null, null);
