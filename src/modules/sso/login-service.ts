// The SSO login flow: authorization code + PKCE, state and nonce in an SSO session row
// bound to the browser; identity resolution and the exchange code live in identity-service.ts (shared with SAML).
// openid-client is imported when an OpenID Connect sign-in runs (not needed to start).
import { openAs, sealAs } from '../../db/sealed-catalogue.js';
import type * as oidc from 'openid-client';
import type { Deps } from '../../deps.js';
import type { SsoFailureCode } from '../../http/errors.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { verifiedDomainOwner } from '../domains/index.js';
import { domainOfAddress } from '../../db/domain-proof.js';
import { failSignIn, finishSignIn, MFA_AMR, SsoFailure, type SignInOutcome } from './identity-service.js';
import { openSecret } from './providers-service.js';
import {
  activeProviderForDomain,
  activeProviderOf,
  findProviderById,
  insertSsoSession,
  type ProviderRow,
  ssoSessionByState,
  takeSsoSession,
} from './repo.js';
import { startSamlLogin } from './saml-login.js';

export { exchange, SsoFailure } from './identity-service.js';

export const SSO_SESSION_TTL_MS = 10 * 60 * 1000;
export const BINDING_COOKIE = 'service_sso_binding';
/** The browser binding of a sign-in (OIDC callback and SAML return both live under /api/v1/sso). */
export const bindingCookieOptions = (deps: Deps) => ({
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: deps.config.secureCookies,
  path: '/api/v1/sso',
});

type Provider = ProviderRow;

/**
 * Only a same-site relative path: no scheme, no //host, no backslash tricks. Characters outside printable ASCII
 * are percent-encoded: raw, they are invalid in the Location header and the callback would fail with a 500.
 */
export function safeRedirect(path: string | undefined): string {
  if (!path || !/^\/(?![/\\])[^\s\\]*$/.test(path)) return '/';
  let encoded: string;
  try {
    encoded = path.replace(/[^\x21-\x7e]+/g, (s) => encodeURIComponent(s));
  } catch {
    return '/'; // a lone surrogate
  }
  return encoded.length <= 2048 ? encoded : '/';
}

export const callbackUrl = (deps: Deps) => `${deps.config.publicUrl}/api/v1/sso/callback`;
export const loginUrl = (deps: Deps, ownerId: string) => `${deps.config.publicUrl}/api/v1/sso/login/${ownerId}`;

/** The active provider of an organisation, or the partner-owned one when the id is a partner's. */
export async function activeProviderFor(deps: Deps, ownerId: string): Promise<Provider | null> {
  return (await activeProviderOf(deps.db, ownerId)) ?? null;
}

export async function startLogin(
  deps: Deps,
  ownerId: string,
  redirect: string | undefined,
): Promise<{ location: string; binding: string }> {
  const provider = await activeProviderFor(deps, ownerId);
  if (!provider) throw new SsoFailure('provider_not_found');
  if (provider.type === 'saml') return startSamlLogin(deps, provider, safeRedirect(redirect), SSO_SESSION_TTL_MS);
  const client = await import('openid-client');
  let config: oidc.Configuration;
  try {
    config = await deps.oidc.config({ ...provider, clientSecret: openSecret(deps, provider) });
  } catch (err) {
    deps.logger.warn({ err, providerId: provider.id }, 'sso discovery failed');
    throw new SsoFailure('provider_unavailable');
  }
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const binding = randomToken();
  const now = deps.clock.now();
  await insertSsoSession(deps.db, {
    providerId: provider.id,
    stateHash: sha256(state),
    nonce: sealAs(deps.box, 'ssoNonce', nonce),
    codeVerifier: sealAs(deps.box, 'ssoVerifier', verifier),
    browserBindingHash: sha256(binding),
    redirectPath: safeRedirect(redirect),
    expiresAt: new Date(now.getTime() + SSO_SESSION_TTL_MS),
  });
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: callbackUrl(deps),
    scope: provider.scopes,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { location: url.href, binding };
}

interface CallbackResult {
  outcome: SignInOutcome;
  redirectPath: string;
}

export async function completeLogin(
  deps: Deps,
  query: Record<string, unknown>,
  rawQuery: string,
  binding: string | undefined,
  meta: AuditRequestMeta,
): Promise<CallbackResult> {
  const state = typeof query.state === 'string' ? query.state : null;
  if (!state) throw new SsoFailure('invalid_state');
  const now = deps.clock.now();
  const row = await ssoSessionByState(deps.db, sha256(state));
  if (!row || row.consumedAt) throw new SsoFailure('invalid_state');
  if (row.expiresAt <= now) throw new SsoFailure('session_expired');
  if (!binding || sha256(binding) !== row.browserBindingHash) throw new SsoFailure('invalid_state');
  if (!(await takeSsoSession(deps.db, row.id, now))) throw new SsoFailure('invalid_state');
  if (typeof query.error === 'string')
    throw new SsoFailure(query.error === 'access_denied' ? 'access_denied' : 'sso_failed');

  const provider = row.providerId ? await findProviderById(deps.db, row.providerId) : undefined;
  if (provider?.status !== 'active') throw new SsoFailure('provider_not_found');
  if (provider.type !== 'oidc') throw new SsoFailure('invalid_state'); // a SAML request's session answers only at the ACS

  const fail = (code: SsoFailureCode) => failSignIn(deps, provider, code, meta);
  const client = await import('openid-client');

  let claims: Record<string, unknown>;
  let userinfo: Record<string, unknown> = {};
  try {
    const config = await deps.oidc.config({ ...provider, clientSecret: openSecret(deps, provider) });
    const tokens = await client.authorizationCodeGrant(
      config,
      new URL(`${callbackUrl(deps)}?${rawQuery}`),
      {
        pkceCodeVerifier: openAs(deps.box, 'ssoVerifier', row.codeVerifier),
        expectedState: state,
        expectedNonce: openAs(deps.box, 'ssoNonce', row.nonce),
        idTokenExpected: true,
      },
      { redirect_uri: callbackUrl(deps) },
    );
    claims = (tokens.claims() ?? {}) as Record<string, unknown>;
    try {
      userinfo = (await client.fetchUserInfo(config, tokens.access_token, String(claims.sub))) as Record<
        string,
        unknown
      >;
    } catch (err) {
      deps.logger.info(
        { err: (err as Error).message, providerId: provider.id },
        'sso userinfo unavailable; using ID token claims',
      );
    }
  } catch (err) {
    deps.logger.warn(
      { err: (err as Error).message, providerId: provider.id },
      'sso code exchange or ID token check failed',
    );
    throw await fail(err instanceof client.ResponseBodyError ? 'token_exchange_failed' : 'id_token_invalid');
  }
  const amr = Array.isArray(claims.amr) ? claims.amr.map(String) : [];
  const outcome = await finishSignIn(
    deps,
    provider,
    {
      subject: String(claims.sub ?? ''),
      email: String(userinfo.email ?? claims.email ?? ''),
      emailVerified: (userinfo.email_verified ?? claims.email_verified) === true,
      name: typeof (userinfo.name ?? claims.name) === 'string' ? String(userinfo.name ?? claims.name) : null,
      idpMfa: amr.some((m) => MFA_AMR.has(m)),
    },
    meta,
  );
  return { outcome, redirectPath: row.redirectPath };
}

/** Enforcement is in force only while the provider is active (these are); the partner's admins keep their password. */
const passwordSignIn = (p: Provider) => (p.enforceSso ? ('partner_admins_only' as const) : undefined);

/** A sign-in page's question: the label, kind and address of the SSO button, and whether the password field goes. */
export async function checkOwner(deps: Deps, ownerId: string) {
  const p = await activeProviderFor(deps, ownerId);
  if (!p) return { ssoEnabled: false };
  return {
    ssoEnabled: true,
    providerName: p.name,
    type: p.type,
    enforceSSO: p.enforceSso,
    loginUrl: loginUrl(deps, ownerId),
  };
}

/**
 * From the email's domain only: never says whether the address has an account. Only the tenant that proved the
 * domain routes it, to its own active provider that lists it; a domain listed by anyone else routes nowhere.
 */
export async function discover(deps: Deps, email: string) {
  const owner = await verifiedDomainOwner(deps.db, email);
  const p = owner ? await activeProviderForDomain(deps.db, owner, domainOfAddress(email)) : undefined;
  if (!p) return { ssoEnabled: false };
  const ownerId = p.orgId ?? p.partnerId;
  return {
    ssoEnabled: true,
    ...(p.orgId ? { orgId: p.orgId } : {}),
    providerName: p.name,
    type: p.type,
    enforceSSO: p.enforceSso,
    loginUrl: loginUrl(deps, ownerId),
    ...(p.enforceSso ? { passwordSignIn: passwordSignIn(p) } : {}),
  };
}
