// SAML 2.0 sign-in: SP-initiated only. The AuthnRequest's id is kept as an SSO session (the same
// 10-minute, browser-bound row as OIDC's state); the IdP POSTs its response to the one ACS, which verifies it with
// @node-saml/node-saml and then checks what the library leaves to us (Recipient, Destination, InResponseTo of the
// signed assertion, single use of the assertion in the shared store). A cross-site POST carries no SameSite=Lax
// cookie, so the ACS hands the verified identity to GET /sso/saml/return, where the browser binding is checked and
// the shared sign-in (identity-service.ts) runs, exactly as for OIDC.
import { sealAs } from '../../db/sealed-catalogue.js';
import type { Deps } from '../../deps.js';
import { domainProvenBy } from '../domains/index.js';
import { notFound, type SsoFailureCode } from '../../http/errors.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { consumeFlow, createFlow } from '../identity/index.js';
import { failSignIn, finishSignIn, SsoFailure, type AssertedIdentity, type SignInOutcome } from './identity-service.js';
import {
  findProviderById,
  findSamlProviderById,
  insertSsoSession,
  type ProviderRow,
  ssoSessionByState,
  takeSsoSession,
} from './repo.js';
import { acsUrl, CLOCK_SKEW_MS, parseXml, samlFor, samlReturnUrl, spMetadataXml, type SamlXmlError } from './saml.js';

type Provider = ProviderRow;

const SAML_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
/** The hand-off from the ACS to GET /sso/saml/return lives this long (the browser follows at once). */
export const SAML_RETURN_TTL_MS = 2 * 60 * 1000;
/** Largest SAMLResponse accepted (base64): a signed response with a few certificates is well under 100 KiB. */
export const MAX_SAML_RESPONSE = 256 * 1024;

/** AuthnContextClassRef values (and Entra's authnmethodsreferences) that say a second factor was used. */
const MFA_CONTEXTS = new Set([
  'http://schemas.microsoft.com/claims/multipleauthn',
  'https://refeds.org/profile/mfa',
  'http://refeds.org/profile/mfa',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorUnregistered',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:Smartcard',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:SmartcardPKI',
]);
const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'emailaddress',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
  'User.email',
];
const NAME_ATTRIBUTES = [
  'name',
  'displayName',
  'http://schemas.microsoft.com/identity/claims/displayname',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
  'urn:oid:2.16.840.1.113730.3.1.241',
  'cn',
];
const GIVEN = [
  'givenName',
  'firstName',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname',
  'urn:oid:2.5.4.42',
  'User.FirstName',
];
const SURNAME = [
  'sn',
  'surname',
  'lastName',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname',
  'urn:oid:2.5.4.4',
  'User.LastName',
];

/** Our SP metadata for a SAML provider (GET /sso/saml/:providerId/metadata). */
export async function samlProviderMetadata(deps: Deps, providerId: string): Promise<string> {
  const p = await findSamlProviderById(deps.db, providerId);
  if (!p) throw notFound('SAML provider');
  return spMetadataXml(deps, p);
}

/** SP-initiated login: an AuthnRequest (HTTP-Redirect) whose id is the SSO session's state. */
export async function startSamlLogin(
  deps: Deps,
  provider: Provider,
  redirectPath: string,
  ttlMs: number,
): Promise<{ location: string; binding: string }> {
  const requestId = `_${randomToken(24)}`;
  const binding = randomToken();
  const location = await (await samlFor(deps, provider, { requestId })).getAuthorizeUrlAsync('', undefined, {});
  await insertSsoSession(deps.db, {
    providerId: provider.id,
    stateHash: sha256(requestId),
    nonce: sealAs(deps.box, 'ssoNonce', requestId),
    codeVerifier: sealAs(deps.box, 'ssoVerifier', 'saml'),
    browserBindingHash: sha256(binding),
    redirectPath,
    expiresAt: new Date(deps.clock.now().getTime() + ttlMs),
  });
  return { location, binding };
}

interface ReturnData {
  providerId: string;
  bindingHash: string;
  redirectPath: string;
  who: AssertedIdentity;
}

const attr = (el: Element, name: string) => el.getAttribute(name) ?? '';
const all = (el: Element | Document, local: string): Element[] => Array.from(el.getElementsByTagNameNS(SAML_NS, local));

/** The values of the assertion's attributes, by Name (and FriendlyName). */
function attributesOf(assertion: Element): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const a of all(assertion, 'Attribute')) {
    const values = all(a, 'AttributeValue')
      .map((v) => (v.textContent ?? '').trim())
      .filter(Boolean);
    for (const key of [attr(a, 'Name'), attr(a, 'FriendlyName')].filter(Boolean))
      out.set(key, [...(out.get(key) ?? []), ...values]);
  }
  return out;
}

const firstOf = (attrs: Map<string, string[]>, names: string[]) => {
  for (const n of names) {
    const v = attrs.get(n)?.[0];
    if (v) return v;
  }
  return null;
};

/**
 * POST /sso/saml/acs. Returns where to send the browser next (GET /sso/saml/return?token=). Throws SsoFailure.
 * The session row is found by the response's InResponseTo; everything it says is then verified by the library
 * against that session's provider before any of it is used.
 */
export async function consumeSamlResponse(
  deps: Deps,
  samlResponse: string | undefined,
  meta: AuditRequestMeta,
): Promise<string> {
  if (!samlResponse || samlResponse.length > MAX_SAML_RESPONSE || !/^[A-Za-z0-9+/=\r\n]+$/.test(samlResponse))
    throw new SsoFailure('saml_response_invalid');
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  let doc: Document;
  try {
    doc = parseXml(xml);
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message }, 'saml response refused before verification');
    throw new SsoFailure('saml_response_invalid');
  }
  const root = doc.documentElement;
  if (root.localName !== 'Response' || root.namespaceURI !== 'urn:oasis:names:tc:SAML:2.0:protocol')
    throw new SsoFailure('saml_response_invalid');
  // IdP-initiated sign-in (no InResponseTo) is off: every response must answer a request this service sent.
  const inResponseTo = attr(root, 'InResponseTo');
  if (!inResponseTo || inResponseTo.length > 200) throw new SsoFailure('invalid_state');
  const session = await ssoSessionByState(deps.db, sha256(inResponseTo));
  // A consumed session is still verified: an assertion posted again is then refused by its single-use claim.
  if (!session) throw new SsoFailure('invalid_state');
  if (session.expiresAt <= deps.clock.now()) throw new SsoFailure('session_expired');
  const provider = session.providerId ? await findProviderById(deps.db, session.providerId) : undefined;
  if (provider?.status !== 'active' || provider.type !== 'saml') throw new SsoFailure('provider_not_found');
  const fail = async (code: SsoFailureCode, why: string) => {
    deps.logger.warn({ providerId: provider.id, reason: why }, 'saml response refused');
    return failSignIn(deps, provider, code, meta);
  };

  const destination = attr(root, 'Destination');
  if (destination && destination !== acsUrl(deps))
    throw await fail('saml_response_invalid', 'Destination is not our ACS');

  const { SamlStatusError } = await import('@node-saml/node-saml');
  let assertionXml: string;
  try {
    const saml = await samlFor(deps, provider, { knownRequest: { id: inResponseTo, createdAt: session.createdAt } });
    const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse });
    if (!profile?.getAssertionXml) throw new Error('no assertion');
    assertionXml = profile.getAssertionXml();
  } catch (err) {
    if (err instanceof SamlStatusError) throw await fail('sso_failed', `IdP status ${err.xmlStatus}`);
    throw await fail('saml_response_invalid', (err as Error).message);
  }

  // Only the verified assertion is read from here on.
  let assertion: Element;
  try {
    assertion = parseXml(assertionXml).documentElement;
  } catch (err) {
    throw await fail('saml_response_invalid', (err as SamlXmlError).message);
  }
  const assertionId = attr(assertion, 'ID');
  const confirmations = all(assertion, 'SubjectConfirmationData');
  if (!confirmations.some((c) => attr(c, 'Recipient') === acsUrl(deps)))
    throw await fail('saml_response_invalid', 'Recipient is not our ACS');
  if (confirmations.some((c) => attr(c, 'Recipient') && attr(c, 'Recipient') !== acsUrl(deps)))
    throw await fail('saml_response_invalid', 'a Recipient is not our ACS');
  if (!confirmations.some((c) => attr(c, 'InResponseTo') === inResponseTo))
    throw await fail('invalid_state', 'the signed assertion answers another request');
  const nameId = all(assertion, 'NameID')[0];
  const subject = (nameId?.textContent ?? '').trim();
  const format = nameId ? attr(nameId, 'Format') : '';
  if (!assertionId || !subject) throw await fail('saml_response_invalid', 'no assertion ID or NameID');
  if (format === TRANSIENT)
    throw await fail('saml_response_invalid', 'a transient NameID cannot be linked to an account');

  // Single use, on every instance: the assertion's id is claimed in the shared store until it has expired.
  const until = Math.max(
    0,
    ...[...all(assertion, 'Conditions'), ...confirmations]
      .map((c) => Date.parse(attr(c, 'NotOnOrAfter')))
      .filter(Number.isFinite),
  );
  const ttl = Math.min(24 * 3600_000, Math.max(10 * 60_000, until - Date.now() + CLOCK_SKEW_MS));
  if (
    !(await deps.store.claim(
      `saml-assertion:${sha256(`${provider.issuer}\n${assertionId}`)}`,
      ttl,
      deps.clock.now().getTime(),
    ))
  )
    throw await fail('assertion_replayed', 'assertion already used');
  if (!(await takeSsoSession(deps.db, session.id, deps.clock.now())))
    throw await fail('invalid_state', 'the request was answered already');

  const attrs = attributesOf(assertion);
  const email =
    (provider.emailAttribute ? firstOf(attrs, [provider.emailAttribute]) : firstOf(attrs, EMAIL_ATTRIBUTES)) ??
    (format === EMAIL_FORMAT ? subject : '');
  const given = firstOf(attrs, GIVEN);
  const surname = firstOf(attrs, SURNAME);
  const name =
    (provider.nameAttribute ? firstOf(attrs, [provider.nameAttribute]) : firstOf(attrs, NAME_ATTRIBUTES)) ??
    ([given, surname].filter(Boolean).join(' ') || null);
  const contexts = [
    ...all(assertion, 'AuthnContextClassRef').map((c) => (c.textContent ?? '').trim()),
    ...(attrs.get('http://schemas.microsoft.com/claims/authnmethodsreferences') ?? []),
  ];
  const who: AssertedIdentity = {
    subject,
    email,
    // SAML has no email_verified: the IdP vouches for an address only in a domain its tenant has proven.
    emailVerified: await domainProvenBy(deps.db, email, provider),
    name,
    idpMfa: contexts.some((c) => MFA_CONTEXTS.has(c)),
  };
  const { token } = await createFlow(deps.db, {
    kind: 'saml_return',
    userId: null,
    data: {
      providerId: provider.id,
      bindingHash: session.browserBindingHash,
      redirectPath: session.redirectPath,
      who,
    } satisfies ReturnData,
    ttlMs: SAML_RETURN_TTL_MS,
    now: deps.clock.now(),
  });
  return `${samlReturnUrl(deps)}?token=${encodeURIComponent(token)}`;
}

/** GET /sso/saml/return: the browser that started the sign-in (binding cookie) completes it. */
export async function completeSamlReturn(
  deps: Deps,
  token: string | undefined,
  binding: string | undefined,
  meta: AuditRequestMeta,
): Promise<{ outcome: SignInOutcome; redirectPath: string }> {
  if (!token) throw new SsoFailure('invalid_state');
  const flow = await consumeFlow(deps.db, 'saml_return', token, deps.clock.now());
  if (!flow) throw new SsoFailure('invalid_state');
  const data = flow.data as ReturnData;
  const provider = await findProviderById(deps.db, data.providerId);
  if (provider?.status !== 'active') throw new SsoFailure('provider_not_found');
  if (!binding || sha256(binding) !== data.bindingHash) throw await failSignIn(deps, provider, 'invalid_state', meta);
  const outcome = await finishSignIn(deps, provider, data.who, meta);
  return { outcome, redirectPath: data.redirectPath };
}
