// Who an identity asserted by a provider (OIDC or SAML) signs in as: an existing link, an existing account (linked at
// once when nothing is escalated, otherwise after the account proves itself), or a new account (auto-provisioning).
// The protocol modules verify the assertion; everything after that lives here, once for both.
import type { Deps } from '../../deps.js';
import type { Executor, Tx } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import { partnerMadeRefusal } from '../../http/refusal.js';
import { AppError, type SsoFailureCode } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  consumeFlow,
  countFlowAttempt,
  createFlow,
  markAddressProven,
  peekFlow,
  startSession,
  type SessionContext,
  type IssuedSession,
  findUser,
} from '../identity/index.js';
import { proveAccount } from '../auth/index.js';
import { domainProvenBy } from '../domains/index.js';
import { offerToExisting } from './offer.js';
import {
  activateUser,
  belongsElsewhere,
  deleteOtherSubjects,
  findProviderById,
  findUserByEmail,
  identitiesOfUserAt,
  identityBySubject,
  type IdentityRow,
  insertIdentity,
  linkPreviewUser,
  orgExists,
  orgMemberRole,
  partnerMemberRole,
  pendingMembershipAt,
  type ProviderRow,
  providerNameAndType,
  provisionAccount,
  touchIdentity,
} from './repo.js';

export const EXCHANGE_TTL_MS = 60 * 1000;
/** The link page of the console: a single-use flow. */
export const LINK_TTL_MS = 10 * 60 * 1000;
export const MAX_LINK_ATTEMPTS = 5;
/** `amr` values (RFC 8176) that name a second factor. */
export const MFA_AMR = new Set(['mfa', 'otp', 'hwk', 'swk', 'sms', 'fpt', 'face']);

type Provider = ProviderRow;

/** A failure that ends the flow with a redirect to /login?error=<code> (codes catalogued in http/errors.ts). */
export class SsoFailure extends Error {
  constructor(readonly code: SsoFailureCode) {
    super(code);
  }
}

/** What a verified assertion says, whatever the protocol. */
export interface AssertedIdentity {
  subject: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  /** The IdP says the user passed a second factor (amr / AuthnContext); counted only with trustIdpMfa. */
  idpMfa: boolean;
}

export type SignInOutcome = { kind: 'code'; exchangeCode: string } | { kind: 'link'; flow: string };

/** Audit of a refused federated sign-in, then the redirect code. */
export async function failSignIn(
  deps: Deps,
  provider: Provider,
  code: SsoFailureCode,
  meta: AuditRequestMeta,
  detail: Record<string, unknown> = {},
): Promise<SsoFailure> {
  await deps.db.transaction((tx) =>
    deps.audit.record(
      tx,
      {
        action: 'auth.login.failed',
        result: 'failure',
        partnerId: provider.partnerId,
        orgId: provider.orgId,
        resourceType: 'sso_provider',
        resourceId: provider.id,
        details: { method: 'sso', protocol: provider.type, reason: code, ...detail },
      },
      meta,
    ),
  );
  return new SsoFailure(code);
}

/** The checks every protocol shares (verified e-mail, allowed domain, what the account store can hold), then resolution. */
export async function finishSignIn(
  deps: Deps,
  provider: Provider,
  who: AssertedIdentity,
  meta: AuditRequestMeta,
): Promise<SignInOutcome> {
  const email = who.email.trim();
  if (!who.subject || !email) throw await failSignIn(deps, provider, 'email_unverified', meta);
  // The provider's own domain list first: an address it was never meant to carry is named as such.
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  const allowed = provider.allowedDomains.split(',').filter(Boolean);
  if (allowed.length && !allowed.includes(domain))
    throw await failSignIn(deps, provider, 'domain_not_allowed', meta, { domain });
  if (!who.emailVerified) throw await failSignIn(deps, provider, 'email_unverified', meta);
  // What the account store can hold (one @, 255 characters; OIDC caps sub at 255): anything else would fail as a 500.
  if (email.length > 255 || !/^[^@\s]+@[^@\s]+$/.test(email))
    throw await failSignIn(deps, provider, 'email_invalid', meta);
  if (who.subject.length > 255) throw await failSignIn(deps, provider, 'id_token_invalid', meta);
  const name = (who.name ?? email.split('@')[0] ?? '').slice(0, 255) || email;
  const mfa = provider.trustIdpMfa && who.idpMfa;
  if (await heldForPartner(deps.db, provider)) throw await failSignIn(deps, provider, 'msp_access_denied', meta);

  // Linking an account by its address alone, or creating one, needs the address's domain proven by this tenant.
  const proven = await domainProvenBy(deps.db, email, provider);
  const resolve = () =>
    deps.db.transaction((tx) =>
      resolveIdentity(deps, tx, provider, { subject: who.subject, email, name }, proven, meta),
    );
  // Two flows of one new user finishing together: the loser of the insert race resolves again and finds the winner's link.
  const resolved = await resolve().catch((err: unknown) => {
    if (isUniqueViolation(err)) return resolve();
    throw err;
  });
  const now = deps.clock.now();
  if ('error' in resolved) throw await failSignIn(deps, provider, resolved.error, meta);
  if ('offered' in resolved) {
    deps.outbox.kick();
    throw await failSignIn(deps, provider, 'invitation_pending', meta);
  }
  if ('link' in resolved) {
    const { token } = await createFlow(deps.db, {
      kind: 'sso_link',
      userId: resolved.link.userId,
      data: { providerId: provider.id, subject: who.subject, email, context: resolved.link.context, mfa },
      ttlMs: LINK_TTL_MS,
      now,
    });
    return { kind: 'link', flow: token };
  }
  const { token } = await createFlow(deps.db, {
    kind: 'sso_exchange',
    userId: resolved.userId,
    data: { context: resolved.context, providerId: provider.id, mfa },
    ttlMs: EXCHANGE_TTL_MS,
    now,
  });
  return { kind: 'code', exchangeCode: token };
}

async function membershipIn(tx: Tx, provider: Provider, userId: string): Promise<SessionContext | null> {
  if (provider.orgId) {
    const roleId = await orgMemberRole(tx, provider.orgId, userId);
    return roleId ? { scope: 'organization', partnerId: provider.partnerId, orgId: provider.orgId, roleId } : null;
  }
  const roleId = await partnerMemberRole(tx, provider.partnerId, userId);
  return roleId ? { scope: 'partner', partnerId: provider.partnerId, orgId: null, roleId } : null;
}

type Resolution =
  | { userId: string; context: SessionContext }
  | { link: { userId: string; context: SessionContext } }
  | { error: SsoFailureCode }
  /** An existing account was offered the membership: the sign-in ends, and the transaction commits the offer. */
  | { offered: true };

/**
 * An existing link first; then an existing member with this e-mail, linked at once only when its domain is proven by
 * the provider's tenant, every membership lies inside that tenant and the account holds no other subject at this
 * provider (whoever controls the IdP already administers everything the account reaches), else after the account
 * proves itself; then auto-provisioning, for a proven domain only.
 */
async function resolveIdentity(
  deps: Deps,
  tx: Tx,
  provider: Provider,
  who: { subject: string; email: string; name: string },
  proven: boolean,
  meta: AuditRequestMeta,
): Promise<Resolution> {
  const now = deps.clock.now();
  // The provider asserts the address in a domain its tenant proved: the account's address counts as proven.
  const proveAddress = async (u: { id: string; email: string; emailVerified: boolean }) => {
    if (proven && !u.emailVerified && u.email.toLowerCase() === who.email.toLowerCase())
      await markAddressProven(tx, u.id, now);
  };
  const viaLink = async (link: IdentityRow): Promise<Resolution> => {
    const u = await findUser(tx, link.userId);
    if (!u || u.status === 'disabled') return { error: 'account_disabled' };
    const ctx = await membershipIn(tx, provider, u.id);
    if (!ctx)
      return { error: (await pendingMembershipAt(tx, provider, u.id)) ? 'invitation_pending' : 'no_org_access' };
    await touchIdentity(tx, link.id, who.email, now);
    await proveAddress(u);
    return { userId: u.id, context: ctx };
  };
  const link = await identityBySubject(tx, provider.id, who.subject);
  if (link) return viaLink(link);
  const existing = await findUserByEmail(tx, who.email);
  if (existing) {
    const here = await identitiesOfUserAt(tx, existing.id, provider.id);
    // A concurrent flow of the same person committed the account and its link between our two reads: that link is ours.
    const same = here.find((l) => l.subject === who.subject);
    if (same) return viaLink(same);
    const ctx = await membershipIn(tx, provider, existing.id);
    if (!ctx) {
      const offered = await offerToExisting(deps, tx, provider, existing, proven, meta);
      return offered === 'offered' ? { offered: true } : { error: offered };
    }
    if (existing.status === 'disabled') return { error: 'account_disabled' };
    // Another subject at this provider (a recycled address at the IdP), or access beyond the provider's tenant:
    // the owner confirms with the account's own credentials first.
    if (!proven || here.length || (await belongsElsewhere(tx, provider, existing.id)))
      return { link: { userId: existing.id, context: ctx } };
    await recordLink(deps, tx, provider, existing, who, 'automatic', meta);
    if (existing.status === 'invited') await activateUser(tx, existing.id, now);
    await proveAddress(existing);
    return { userId: existing.id, context: ctx };
  }
  if (!provider.autoProvision) return { error: 'user_not_found' };
  if (!proven) return { error: 'domain_not_verified' };
  if (!provider.defaultRoleId) return { error: 'default_role_required' };
  if (provider.orgId && !(await orgExists(tx, provider.orgId))) return { error: 'provider_not_found' };
  const u = await provisionAccount(tx, { ...provider, defaultRoleId: provider.defaultRoleId }, who, now);
  await deps.audit.record(
    tx,
    {
      action: 'user.sso.provision',
      actor: { userId: u.id, email: u.email },
      partnerId: provider.partnerId,
      orgId: provider.orgId,
      resourceType: 'user',
      resourceId: u.id,
      details: { providerId: provider.id, roleId: provider.defaultRoleId },
    },
    meta,
  );
  return {
    userId: u.id,
    context: provider.orgId
      ? { scope: 'organization', partnerId: provider.partnerId, orgId: provider.orgId, roleId: provider.defaultRoleId }
      : { scope: 'partner', partnerId: provider.partnerId, orgId: null, roleId: provider.defaultRoleId },
  };
}

async function recordLink(
  deps: Deps,
  tx: Tx,
  provider: Provider,
  user: { id: string; email: string },
  who: { subject: string; email: string },
  how: 'automatic' | 'confirmed',
  meta: AuditRequestMeta,
) {
  const identityId = await insertIdentity(tx, {
    providerId: provider.id,
    userId: user.id,
    subject: who.subject,
    email: who.email,
    lastLoginAt: deps.clock.now(),
  });
  await deps.audit.record(
    tx,
    {
      action: 'sso.identity.link',
      actor: { userId: user.id, email: user.email },
      partnerId: provider.partnerId,
      orgId: provider.orgId,
      resourceType: 'sso_identity',
      resourceId: identityId,
      details: { providerId: provider.id, how },
    },
    meta,
  );
}

interface ExchangeData {
  context: SessionContext;
  providerId: string;
  mfa?: boolean;
}

/** An organisation's provider the partner's staff set up signs nobody in while the organisation's controls hold them. */
async function heldForPartner(ex: Executor, provider: Pick<Provider, 'orgId' | 'madeByPartner'>): Promise<boolean> {
  if (!provider.orgId || !provider.madeByPartner) return false;
  return (await partnerMadeRefusal(ex, provider.orgId, 'SSO provider')) !== null;
}

/** The session of a federated sign-in: `sso` marks it as begun at the IdP (switch-context asks for the password). */
async function federatedSession(
  deps: Deps,
  tx: Tx,
  user: { id: string; email: string },
  data: ExchangeData,
  meta: AuditRequestMeta,
): Promise<IssuedSession> {
  const provider = await findProviderById(tx, data.providerId);
  if (provider?.status !== 'active')
    throw new AppError('invalid_exchange_code', 'The SSO provider is no longer active.');
  // Suspended between the IdP's answer and the exchange (or the link's confirmation): held all the same.
  if (await heldForPartner(tx, provider)) throw new AppError('msp_access_denied');
  return startSession(deps, tx, user, data.context, { mfa: data.mfa === true, method: 'sso', meta });
}

/** Trades the exchange code for tokens; works once, within 60 seconds, on any instance. */
export async function exchange(deps: Deps, code: string, meta: AuditRequestMeta): Promise<IssuedSession> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const flow = await consumeFlow(tx, 'sso_exchange', code, now);
    if (!flow?.userId) throw new AppError('invalid_exchange_code');
    const u = await findUser(tx, flow.userId);
    if (u?.status !== 'active') throw new AppError('invalid_exchange_code');
    return federatedSession(deps, tx, u, flow.data as ExchangeData, meta);
  });
}

/** What the console's link page shows before the user confirms. */
export async function linkPreview(deps: Deps, token: string) {
  const flow = await peekFlow(deps.db, 'sso_link', token, deps.clock.now());
  if (!flow?.userId) throw new AppError('sso_link_invalid');
  const data = flow.data as ExchangeData & { email: string };
  const u = await linkPreviewUser(deps.db, flow.userId);
  const p = await providerNameAndType(deps.db, data.providerId);
  if (!u || !p) throw new AppError('sso_link_invalid');
  return {
    email: u.email,
    providerName: p.name,
    type: p.type,
    passwordRequired: true as const,
    codeRequired: u.mfaEnabled,
    expiresAt: flow.expiresAt.toISOString(),
  };
}

/**
 * The account proves itself once (password, and its second factor when it has one); the link is recorded and the
 * sign-in completes. Wrong proofs count against the flow; the fifth ends it.
 */
export async function confirmLink(
  deps: Deps,
  input: { flow: string; password: string; code?: string },
  meta: AuditRequestMeta,
): Promise<IssuedSession> {
  const now = deps.clock.now();
  const flow = await peekFlow(deps.db, 'sso_link', input.flow, now);
  if (!flow?.userId) throw new AppError('sso_link_invalid');
  const u = await findUser(deps.db, flow.userId);
  if (!u || u.status === 'disabled') throw new AppError('sso_link_invalid');
  const refusal = await proveAccount(deps, u, input.password, input.code);
  if (refusal) {
    if ((await countFlowAttempt(deps.db, flow.id)) >= MAX_LINK_ATTEMPTS)
      await consumeFlow(deps.db, 'sso_link', input.flow, now);
    throw new AppError(refusal);
  }
  const data = flow.data as ExchangeData & { subject: string; email: string };
  return deps.db.transaction(async (tx) => {
    if (!(await consumeFlow(tx, 'sso_link', input.flow, now))) throw new AppError('sso_link_invalid');
    const provider = await findProviderById(tx, data.providerId);
    if (provider?.status !== 'active') throw new AppError('sso_link_invalid', 'The SSO provider is no longer active.');
    // The owner confirmed: this subject replaces any other the account held at this provider.
    await deleteOtherSubjects(tx, provider.id, u.id, data.subject);
    const taken = await identityBySubject(tx, provider.id, data.subject);
    if (taken && taken.userId !== u.id)
      throw new AppError('conflict', 'This identity is already linked to another account.');
    if (!taken) await recordLink(deps, tx, provider, u, data, 'confirmed', meta);
    return federatedSession(deps, tx, u, data, meta);
  });
}
