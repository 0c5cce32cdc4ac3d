// Invitation links (7 days, one live link per user) and the switch between a user's memberships.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  assertStrongPassword,
  consumeFlow,
  createFlow,
  finishUnanswered,
  findUser,
  hashPassword,
  type IssuedSession,
  listMemberships,
  markMembershipUsed,
  peekFlow,
  type SessionContext,
  startSession,
  voidFlows,
} from '../identity/index.js';
import { proveAccount } from './proof.js';
import { partnerMadeRefusal } from '../../http/refusal.js';
import { activateInvitedUser, isPartnerMember, moveSession, sessionMethod, tenantNames } from './repo.js';

export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;

/**
 * A fresh invitation link for an invited user; any earlier link stops working. Inside the invite's transaction.
 * `byPartner`: the inviter spoke for the partner (a partner member, a partner credential), so the organisation's
 * controls hold the link (inviteHeld).
 */
export async function createInviteToken(
  tx: Executor,
  now: Date,
  userId: string,
  ctx: SessionContext,
  invitedBy: string | null,
  byPartner = false,
): Promise<string> {
  await voidFlows(tx, userId, 'invite', now);
  const { token } = await createFlow(tx, {
    kind: 'invite',
    userId,
    data: { context: ctx, invitedBy, byPartner } satisfies InviteData,
    ttlMs: INVITE_TTL_MS,
    now,
  });
  return token;
}

interface InviteData {
  context: SessionContext;
  invitedBy: string | null;
  /** Absent on links made before it was recorded: then the inviter's partner membership decides. */
  byPartner?: boolean;
}

/**
 * An invitation into an organisation that someone acting for the partner made is held while the organisation's
 * controls hold the partner's staff (403 msp_access_denied): it cannot make a member, an admin least of all, meanwhile.
 */
async function inviteHeld(db: Executor, data: InviteData): Promise<void> {
  const ctx = data.context;
  if (ctx.scope !== 'organization' || !ctx.orgId) return;
  const byPartner =
    data.byPartner ?? (data.invitedBy !== null && (await isPartnerMember(db, ctx.partnerId!, data.invitedBy)));
  if (!byPartner) return;
  const refusal = await partnerMadeRefusal(db, ctx.orgId, 'invitation');
  if (refusal) throw refusal;
}

export const inviteUrl = (appUrl: string, token: string) =>
  `${appUrl}/accept-invite?token=${encodeURIComponent(token)}`;

export async function previewInvite(deps: Deps, token: string) {
  const flow = await peekFlow(deps.db, 'invite', token, deps.clock.now());
  const user = flow?.userId ? await findUser(deps.db, flow.userId) : undefined;
  if (!flow || !user || user.status !== 'invited') throw new AppError('invite_invalid');
  await inviteHeld(deps.db, flow.data as InviteData);
  const ctx = (flow.data as { context: SessionContext }).context;
  return { email: user.email, name: user.name, ...(await tenantNames(deps.db, ctx)) };
}

/** The membership an invitation was for (it may have been withdrawn since). */
const invitedInto =
  (ctx: SessionContext) => (m: { scope: string | null; partnerId: string | null; orgId: string | null }) =>
    m.scope === ctx.scope && (ctx.scope === 'partner' ? m.partnerId === ctx.partnerId : m.orgId === ctx.orgId);

export async function acceptInvite(
  deps: Deps,
  input: { token: string; password: string; name?: string },
  meta: AuditRequestMeta,
): Promise<IssuedSession> {
  const now = deps.clock.now();
  const pending = await peekFlow(deps.db, 'invite', input.token, now);
  const user = pending?.userId ? await findUser(deps.db, pending.userId) : undefined;
  if (!pending || !user || user.status !== 'invited') {
    const again = await acceptInviteAgain(deps, input, meta);
    if (again) return again;
    throw new AppError('invite_invalid');
  }
  await assertStrongPassword(input.password, { email: user.email, name: input.name ?? user.name });
  const passwordHash = await hashPassword(input.password);
  return deps.db.transaction(async (tx) => {
    const flow = await consumeFlow(tx, 'invite', input.token, now);
    if (!flow) throw new AppError('invite_invalid');
    // Held: the transaction rolls back, so the link works again once the organisation lifts the suspension.
    await inviteHeld(tx, flow.data as InviteData);
    const ctx = (flow.data as { context: SessionContext }).context;
    const memberships = await listMemberships(tx, user.id);
    const still = memberships.find(invitedInto(ctx));
    if (!still) throw new AppError('invite_invalid', 'The invitation was withdrawn.');
    const activated = await activateInvitedUser(tx, user.id, { passwordHash, name: input.name ?? user.name, now });
    if (!activated) throw new AppError('invite_invalid');
    await deps.audit.record(
      tx,
      {
        action: 'user.invite.accept',
        actor: { userId: user.id, email: user.email },
        partnerId: still.partnerId,
        orgId: still.orgId,
        resourceType: 'user',
        resourceId: user.id,
      },
      meta,
    );
    const issued = await startSession(
      deps,
      tx,
      activated,
      { scope: still.scope, partnerId: still.partnerId, orgId: still.orgId, roleId: still.roleId },
      { mfa: false, method: 'invite', meta },
    );
    return { ...issued, spentFlowId: flow.id };
  });
}

/**
 * The second submission of an invitation whose acceptance committed but whose answer failed: the person proves the
 * password they just set and is signed in to the invited membership, as the acceptance would have.
 */
async function acceptInviteAgain(
  deps: Deps,
  input: { token: string; password: string },
  meta: AuditRequestMeta,
): Promise<IssuedSession | null> {
  const found = await finishUnanswered(deps, 'invite', input.token, { password: input.password });
  if (!found) return null;
  const ctx = (found.flow.data as { context: SessionContext }).context;
  const m = (await listMemberships(deps.db, found.user.id)).find(invitedInto(ctx));
  if (!m) return null;
  const issued = await deps.db.transaction((tx) =>
    startSession(
      deps,
      tx,
      found.user,
      { scope: m.scope, partnerId: m.partnerId, orgId: m.orgId, roleId: m.roleId },
      { mfa: false, method: 'invite', meta },
    ),
  );
  return { ...issued, spentFlowId: found.flow.id };
}

/** Moves the caller's session to another of its memberships, under a new refresh token. */
export async function switchContext(
  deps: Deps,
  principal: Principal,
  target: { partnerId?: string; orgId?: string; password?: string; code?: string },
  meta: AuditRequestMeta,
): Promise<IssuedSession> {
  const memberships = await listMemberships(deps.db, principal.userId);
  const m = target.partnerId
    ? memberships.find((x) => x.scope === 'partner' && x.partnerId === target.partnerId)
    : memberships.find((x) => x.scope === 'organization' && x.orgId === target.orgId);
  if (!m) throw new AppError('not_found', 'You have no membership there.');
  const ctx: SessionContext = { scope: m.scope, partnerId: m.partnerId, orgId: m.orgId, roleId: m.roleId };
  const method = await sessionMethod(deps.db, principal.sessionId);
  // A membership an enforcing provider holds is entered from a session begun at an identity provider, never from a
  // password or passkey session.
  if (m.ssoOnly && !method?.startsWith('sso')) throw new AppError('sso_enforced');
  // A session begun at an identity provider acts in that provider's tenant only: anywhere else the account proves
  // itself with its own password (and second factor) first, once per session.
  const leavingIdp =
    method === 'sso' &&
    (ctx.scope !== principal.tenantKind || ctx.partnerId !== principal.partnerId || ctx.orgId !== principal.orgId);
  if (leavingIdp) {
    if (target.password === undefined) throw new AppError('password_confirmation_required');
    const user = await findUser(deps.db, principal.userId);
    const refusal = user ? await proveAccount(deps, user, target.password, target.code) : 'invalid_credentials';
    if (refusal === 'invalid_credentials') throw new AppError(refusal, 'The password is not correct.', {}, 400);
    if (refusal) throw new AppError(refusal);
  }
  const refreshToken = randomToken();
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await moveSession(tx, principal.sessionId, ctx, sha256(refreshToken), now, leavingIdp ? 'sso+password' : undefined);
    await markMembershipUsed(tx, principal.userId, ctx, now);
    await deps.audit.record(
      tx,
      {
        action: 'auth.context.switch',
        actor: { userId: principal.userId, email: principal.email },
        partnerId: ctx.partnerId,
        orgId: ctx.orgId,
        resourceType: 'session',
        resourceId: principal.sessionId,
        details: { scope: ctx.scope },
      },
      meta,
    );
  });
  const accessToken = await deps.tokens.sign({
    sub: principal.userId,
    sid: principal.sessionId,
    ...ctx,
    mfa: principal.mfa,
    authTime: principal.authTime,
  });
  return { userId: principal.userId, sessionId: principal.sessionId, accessToken, refreshToken };
}
