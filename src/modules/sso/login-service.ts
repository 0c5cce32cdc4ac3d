// The SSO login flow (spec 5.8; CONTRACT 6): authorization code + PKCE, state and nonce in an SSO session row
// bound to the browser, identity resolution, and a single-use 60-second exchange code.
import { and, eq, isNull, sql } from 'drizzle-orm';
import * as client from 'openid-client';
import type { Deps } from '../../deps.js';
import type { Tx } from '../../db/connect.js';
import { organizationUsers, organizations, partnerUsers, ssoIdentities, ssoProviders, ssoSessions, users } from '../../db/schema/index.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import type { AuditRequestMeta } from '../audit/writer.js';
import { consumeFlow, createFlow } from '../auth/flows.js';
import { startSession } from '../auth/login-service.js';
import type { SessionContext } from '../auth/sessions.js';
import type { IssuedSession } from '../auth/token-response.js';
import { AppError } from '../../http/errors.js';
import { openSecret } from './providers-service.js';

export const SSO_SESSION_TTL_MS = 10 * 60 * 1000;
export const EXCHANGE_TTL_MS = 60 * 1000;
export const BINDING_COOKIE = 'service_sso_binding';

type Provider = typeof ssoProviders.$inferSelect;

const isUniqueViolation = (err: unknown) => ((err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code) === '23505';

/** A failure that ends the flow with a redirect to /login?error=<code>. */
export class SsoFailure extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

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
  const [p] = await deps.db
    .select()
    .from(ssoProviders)
    .where(and(eq(ssoProviders.status, 'active'), sql`(${ssoProviders.orgId} = ${ownerId} or (${ssoProviders.orgId} is null and ${ssoProviders.partnerId} = ${ownerId}))`))
    .limit(1);
  return p ?? null;
}

export async function startLogin(deps: Deps, ownerId: string, redirect: string | undefined): Promise<{ location: string; binding: string }> {
  const provider = await activeProviderFor(deps, ownerId);
  if (!provider) throw new SsoFailure('provider_not_found');
  let config: client.Configuration;
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
  await deps.db.insert(ssoSessions).values({
    providerId: provider.id,
    stateHash: sha256(state),
    nonce: deps.box.seal(nonce, 'sso-nonce'),
    codeVerifier: deps.box.seal(verifier, 'sso-verifier'),
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
  exchangeCode: string;
  redirectPath: string;
}

export async function completeLogin(deps: Deps, query: Record<string, unknown>, rawQuery: string, binding: string | undefined, meta: AuditRequestMeta): Promise<CallbackResult> {
  const state = typeof query.state === 'string' ? query.state : null;
  if (!state) throw new SsoFailure('invalid_state');
  const now = deps.clock.now();
  const [row] = await deps.db.select().from(ssoSessions).where(eq(ssoSessions.stateHash, sha256(state))).limit(1);
  if (!row || row.consumedAt) throw new SsoFailure('invalid_state');
  if (row.expiresAt <= now) throw new SsoFailure('session_expired');
  if (!binding || sha256(binding) !== row.browserBindingHash) throw new SsoFailure('invalid_state');
  const taken = await deps.db.update(ssoSessions).set({ consumedAt: now }).where(and(eq(ssoSessions.id, row.id), isNull(ssoSessions.consumedAt))).returning({ id: ssoSessions.id });
  if (!taken.length) throw new SsoFailure('invalid_state');
  if (typeof query.error === 'string') throw new SsoFailure(query.error === 'access_denied' ? 'access_denied' : 'sso_failed');

  const [provider] = row.providerId ? await deps.db.select().from(ssoProviders).where(eq(ssoProviders.id, row.providerId)) : [];
  if (!provider || provider.status !== 'active') throw new SsoFailure('provider_not_found');

  const fail = async (code: string, detail?: Record<string, unknown>) => {
    await deps.db.transaction((tx) =>
      deps.audit.record(tx, { action: 'auth.login.failed', result: 'failure', partnerId: provider.partnerId, orgId: provider.orgId, resourceType: 'sso_provider', resourceId: provider.id, details: { method: 'sso', reason: code, ...detail } }, meta),
    );
    return new SsoFailure(code);
  };

  let claims: Record<string, unknown>;
  let userinfo: Record<string, unknown> = {};
  try {
    const config = await deps.oidc.config({ ...provider, clientSecret: openSecret(deps, provider) });
    const tokens = await client.authorizationCodeGrant(
      config,
      new URL(`${callbackUrl(deps)}?${rawQuery}`),
      { pkceCodeVerifier: deps.box.open(row.codeVerifier, 'sso-verifier'), expectedState: state, expectedNonce: deps.box.open(row.nonce, 'sso-nonce'), idTokenExpected: true },
      { redirect_uri: callbackUrl(deps) },
    );
    claims = (tokens.claims() ?? {}) as Record<string, unknown>;
    try {
      userinfo = (await client.fetchUserInfo(config, tokens.access_token, String(claims.sub))) as Record<string, unknown>;
    } catch (err) {
      deps.logger.info({ err: (err as Error).message, providerId: provider.id }, 'sso userinfo unavailable; using ID token claims');
    }
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, providerId: provider.id }, 'sso code exchange or ID token check failed');
    throw await fail(err instanceof client.ResponseBodyError ? 'token_exchange_failed' : 'id_token_invalid');
  }
  const subject = String(claims.sub ?? '');
  const email = String(userinfo.email ?? claims.email ?? '').trim();
  const verified = (userinfo.email_verified ?? claims.email_verified) === true;
  if (!subject || !email || !verified) throw await fail('email_unverified');
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  const allowed = provider.allowedDomains.split(',').filter(Boolean);
  if (allowed.length && !allowed.includes(domain)) throw await fail('domain_not_allowed', { domain });
  // What the account store can hold (one @, 255 characters; OIDC caps sub at 255): anything else would fail as a 500.
  if (email.length > 255 || !/^[^@\s]+@[^@\s]+$/.test(email)) throw await fail('email_invalid');
  if (subject.length > 255) throw await fail('id_token_invalid');
  const name = String(userinfo.name ?? claims.name ?? email.split('@')[0]).slice(0, 255) || email;

  const resolve = () => deps.db.transaction((tx) => resolveIdentity(deps, tx, provider, { subject, email, name }, meta));
  // Two flows of one new user finishing together: the loser of the insert race resolves again and finds the winner's link.
  const resolved = await resolve().catch((err: unknown) => {
    if (isUniqueViolation(err)) return resolve();
    throw err;
  });
  if ('error' in resolved) throw await fail(resolved.error);
  const { token } = await createFlow(deps.db, { kind: 'sso_exchange', userId: resolved.userId, data: { context: resolved.context, providerId: provider.id }, ttlMs: EXCHANGE_TTL_MS, now });
  return { exchangeCode: token, redirectPath: row.redirectPath };
}

async function membershipIn(tx: Tx, provider: Provider, userId: string): Promise<SessionContext | null> {
  if (provider.orgId) {
    const [m] = await tx.select({ roleId: organizationUsers.roleId }).from(organizationUsers).where(and(eq(organizationUsers.orgId, provider.orgId), eq(organizationUsers.userId, userId)));
    return m ? { scope: 'organization', partnerId: provider.partnerId, orgId: provider.orgId, roleId: m.roleId } : null;
  }
  const [m] = await tx.select({ roleId: partnerUsers.roleId }).from(partnerUsers).where(and(eq(partnerUsers.partnerId, provider.partnerId), eq(partnerUsers.userId, userId)));
  return m ? { scope: 'partner', partnerId: provider.partnerId, orgId: null, roleId: m.roleId } : null;
}

async function belongsElsewhere(tx: Tx, provider: Provider, userId: string): Promise<boolean> {
  const res = await tx.execute(sql`
    select 1 from partner_users where user_id = ${userId} and (${provider.orgId}::uuid is not null or partner_id <> ${provider.partnerId})
    union all
    select 1 from organization_users where user_id = ${userId} and org_id is distinct from ${provider.orgId}::uuid
      and (${provider.orgId}::uuid is not null or org_id not in (select id from organizations where partner_id = ${provider.partnerId}))
    limit 1`);
  return (res as unknown as { rows: unknown[] }).rows.length > 0;
}

/** An existing link first, then a verified-email match among the members, then auto-provisioning. */
async function resolveIdentity(deps: Deps, tx: Tx, provider: Provider, who: { subject: string; email: string; name: string }, meta: AuditRequestMeta): Promise<{ userId: string; context: SessionContext } | { error: string }> {
  const now = deps.clock.now();
  const viaLink = async (link: typeof ssoIdentities.$inferSelect) => {
    const [u] = await tx.select().from(users).where(eq(users.id, link.userId));
    if (!u || u.status === 'disabled') return { error: 'account_disabled' };
    const ctx = await membershipIn(tx, provider, u.id);
    if (!ctx) return { error: 'no_org_access' };
    await tx.update(ssoIdentities).set({ lastLoginAt: now, email: who.email }).where(eq(ssoIdentities.id, link.id));
    return { userId: u.id, context: ctx };
  };
  const [link] = await tx.select().from(ssoIdentities).where(and(eq(ssoIdentities.providerId, provider.id), eq(ssoIdentities.subject, who.subject)));
  if (link) return viaLink(link);
  const [existing] = await tx.select().from(users).where(sql`lower(${users.email}) = lower(${who.email})`).limit(1);
  if (existing) {
    const links = await tx.select().from(ssoIdentities).where(eq(ssoIdentities.userId, existing.id));
    // A concurrent flow of the same person committed the account and its link between our two reads: that link is ours.
    const same = links.find((l) => l.providerId === provider.id && l.subject === who.subject);
    if (same) return viaLink(same);
    const ctx = await membershipIn(tx, provider, existing.id);
    if (!ctx) return { error: 'no_org_access' };
    if (existing.status === 'disabled') return { error: 'account_disabled' };
    // Never take over an account that signs in another way without its owner's consent.
    // A link under another subject (of any provider, this one included: a recycled address at the IdP) counts too.
    if (existing.passwordHash || links.length) return { error: 'account_link_required' };
    // Whoever configures this provider controls its identities: an email match may only claim an account whose every
    // membership lies within the provider's own scope, so an organisation's IdP cannot reach partner or other access.
    if (await belongsElsewhere(tx, provider, existing.id)) return { error: 'account_link_required' };
    await tx.insert(ssoIdentities).values({ providerId: provider.id, userId: existing.id, subject: who.subject, email: who.email, lastLoginAt: now });
    if (existing.status === 'invited') await tx.update(users).set({ status: 'active', updatedAt: now }).where(eq(users.id, existing.id));
    return { userId: existing.id, context: ctx };
  }
  if (!provider.autoProvision) return { error: 'user_not_found' };
  if (!provider.defaultRoleId) return { error: 'default_role_required' };
  if (provider.orgId) {
    const [org] = await tx.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, provider.orgId));
    if (!org) return { error: 'provider_not_found' };
  }
  const [u] = await tx.insert(users).values({ email: who.email, name: who.name, status: 'active' }).returning();
  if (provider.orgId) await tx.insert(organizationUsers).values({ orgId: provider.orgId, userId: u!.id, roleId: provider.defaultRoleId });
  else await tx.insert(partnerUsers).values({ partnerId: provider.partnerId, userId: u!.id, roleId: provider.defaultRoleId, orgAccess: 'none' });
  await tx.insert(ssoIdentities).values({ providerId: provider.id, userId: u!.id, subject: who.subject, email: who.email, lastLoginAt: now });
  await deps.audit.record(tx, { action: 'user.sso.provision', actor: { userId: u!.id, email: u!.email }, partnerId: provider.partnerId, orgId: provider.orgId, resourceType: 'user', resourceId: u!.id, details: { providerId: provider.id, roleId: provider.defaultRoleId } }, meta);
  return { userId: u!.id, context: provider.orgId ? { scope: 'organization', partnerId: provider.partnerId, orgId: provider.orgId, roleId: provider.defaultRoleId } : { scope: 'partner', partnerId: provider.partnerId, orgId: null, roleId: provider.defaultRoleId } };
}

/** Trades the exchange code for tokens; works once, within 60 seconds, on any instance. */
export async function exchange(deps: Deps, code: string, meta: AuditRequestMeta): Promise<IssuedSession> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const flow = await consumeFlow(tx, 'sso_exchange', code, now);
    if (!flow?.userId) throw new AppError('invalid_exchange_code');
    const [u] = await tx.select().from(users).where(eq(users.id, flow.userId));
    if (!u || u.status !== 'active') throw new AppError('invalid_exchange_code');
    const { context, providerId } = flow.data as { context: SessionContext; providerId: string };
    const [provider] = await tx.select({ status: ssoProviders.status }).from(ssoProviders).where(eq(ssoProviders.id, providerId));
    if (provider?.status !== 'active') throw new AppError('invalid_exchange_code', 'The SSO provider is no longer active.');
    return startSession(deps, tx, u, context, { mfa: false, method: 'sso', meta });
  });
}

export async function checkOwner(deps: Deps, ownerId: string) {
  const p = await activeProviderFor(deps, ownerId);
  if (!p) return { ssoEnabled: false };
  return { ssoEnabled: true, providerName: p.name, type: 'oidc' as const, enforceSSO: p.enforceSso, loginUrl: loginUrl(deps, ownerId) };
}

/** From the email's domain only: never says whether the address has an account. */
export async function discover(deps: Deps, email: string) {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  const [p] = await deps.db
    .select()
    .from(ssoProviders)
    .where(and(eq(ssoProviders.status, 'active'), sql`${domain} = any(string_to_array(${ssoProviders.allowedDomains}, ','))`))
    .orderBy(ssoProviders.createdAt)
    .limit(1);
  if (!p) return { ssoEnabled: false };
  const ownerId = p.orgId ?? p.partnerId;
  return { ssoEnabled: true, ...(p.orgId ? { orgId: p.orgId } : {}), providerName: p.name, type: 'oidc' as const, enforceSSO: p.enforceSso, loginUrl: loginUrl(deps, ownerId) };
}
