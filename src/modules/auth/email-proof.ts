// Proven addresses: a mailed link proves the account's address (email_verify), and a change of the login address waits
// for a link opened at the NEW address (email_change). Until then the old address stays the login; the old address is
// told of the request. The same confirm consumes both kinds of link, once.
import { confinedToTenant, withinTenant } from '../../access/account-authority.js';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import { AppError, notFound } from '../../http/errors.js';
import type { AuditActor, AuditRequestMeta } from '../audit/index.js';
import {
  addressTakenByOther,
  consumeFlow,
  createFlow,
  findUser,
  liveFlowOf,
  lockAddress,
  lockUser,
  markAddressProven,
  mails,
  pickDefault,
  listMemberships,
  voidFlows,
} from '../identity/index.js';

export const EMAIL_PROOF_TTL_MS = 24 * 60 * 60 * 1000;

export const verifyEmailUrl = (appUrl: string, token: string) =>
  `${appUrl}/verify-email?token=${encodeURIComponent(token)}`;

/** Who asked for a change of address: the account itself, an administrator, or a tenant's SCIM token. */
export type ChangeRequester =
  | { kind: 'self' }
  | { kind: 'admin'; partnerId: string; orgId: string | null }
  | { kind: 'scim'; partnerId: string; orgId: string | null };

type EmailFlowData = { email: string; requester?: ChangeRequester };

/**
 * Mails a link that proves the account's current address (one live link at a time). false: already proven, nothing
 * sent. Rate-limited per account with the reset-link limit: both mail a link on request.
 */
export async function sendVerification(deps: Deps, userId: string): Promise<boolean> {
  const user = await findUser(deps.db, userId);
  if (!user) throw notFound('user');
  if (user.emailVerified) return false;
  await deps.limits.enforce('forgotPassword', `verify:${user.id}`);
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await voidFlows(tx, user.id, 'email_verify', now);
    const { token } = await createFlow(tx, {
      kind: 'email_verify',
      userId: user.id,
      data: { email: user.email.toLowerCase() } satisfies EmailFlowData,
      ttlMs: EMAIL_PROOF_TTL_MS,
      now,
    });
    await deps.outbox.enqueue(tx, mails.verifyEmail(user.email, { url: verifyEmailUrl(deps.config.appUrl, token) }));
  });
  deps.outbox.kick();
  return true;
}

/**
 * Asks for a change of the login address, in the caller's transaction (the caller has checked its authority). The
 * link goes to the new address, a notice to the old one; nothing about the login changes yet. The same change asked
 * again while its link is live sends nothing (a SCIM client repeats its writes). Answers the pending address, or null
 * when the address asked for is the current one (a pending change is then withdrawn).
 */
export async function requestEmailChange(
  deps: Pick<Deps, 'clock' | 'outbox' | 'config'>,
  tx: Executor,
  user: { id: string; email: string },
  next: string,
  requester: ChangeRequester,
): Promise<string | null> {
  const now = deps.clock.now();
  const address = next.trim().toLowerCase();
  if (address === user.email.toLowerCase()) {
    await voidFlows(tx, user.id, 'email_change', now);
    return null;
  }
  if (await addressTakenByOther(tx, address, user.id))
    throw new AppError('email_taken', 'Another account already uses this e-mail address.');
  const live = await liveFlowOf(tx, user.id, 'email_change', now);
  if ((live?.data as EmailFlowData | undefined)?.email === address) return address;
  await voidFlows(tx, user.id, 'email_change', now);
  const { token } = await createFlow(tx, {
    kind: 'email_change',
    userId: user.id,
    data: { email: address, requester } satisfies EmailFlowData,
    ttlMs: EMAIL_PROOF_TTL_MS,
    now,
  });
  await deps.outbox.enqueue(tx, mails.emailChangeProof(address, { url: verifyEmailUrl(deps.config.appUrl, token) }));
  await deps.outbox.enqueue(
    tx,
    mails.emailChangeNotice(user.email, { newEmail: address, url: `${deps.config.appUrl}/login` }),
  );
  return address;
}

/** The change of address waiting for its proof, if any (GET /auth/verify-email). */
export async function emailStatus(deps: Pick<Deps, 'db' | 'clock'>, userId: string) {
  const user = await findUser(deps.db, userId);
  if (!user) throw notFound('user');
  const live = await liveFlowOf(deps.db, userId, 'email_change', deps.clock.now());
  return {
    email: user.email,
    emailVerified: user.emailVerified,
    pendingEmail: live ? (live.data as EmailFlowData).email : null,
    pendingExpiresAt: live ? live.expiresAt.toISOString() : null,
  };
}

/**
 * POST /auth/verify-email: spends a mailed link once. A proof of the current address marks it verified; a change
 * moves the login to the new address if it is still free (a racer that took it first: 409 email_taken, the link
 * kept for a retry). A change a SCIM token asked for still needs the account confined to that token's tenant.
 */
export async function confirmEmail(deps: Deps, token: string, meta: AuditRequestMeta) {
  const now = deps.clock.now();
  try {
    const result = await deps.db.transaction(async (tx) => {
      const flow = await consumeFlow(tx, ['email_verify', 'email_change'], token, now);
      if (!flow?.userId) throw new AppError('verification_invalid');
      const data = flow.data as EmailFlowData;
      await lockUser(tx, flow.userId);
      const user = await findUser(tx, flow.userId);
      if (!user || user.status === 'disabled') throw new AppError('verification_invalid');
      const ctx = pickDefault(await listMemberships(tx, user.id));
      const actor: AuditActor = { userId: user.id, email: user.email };
      if (flow.kind === 'email_verify') {
        // A link for an address the account no longer has proves nothing about the current one.
        if (user.email.toLowerCase() !== data.email) throw new AppError('verification_invalid');
        await markAddressProven(tx, user.id, now);
        await deps.audit.record(
          tx,
          {
            action: 'user.email.verify',
            actor,
            partnerId: ctx.partnerId,
            orgId: ctx.orgId,
            resourceType: 'user',
            resourceId: user.id,
          },
          meta,
        );
        return { email: user.email, emailVerified: true as const, changed: false };
      }
      if (data.requester?.kind === 'scim' && !(await confinedToTenant(tx, data.requester, user.id)))
        throw new AppError('account_outside_authority');
      if (data.requester?.kind === 'admin' && !(await withinTenant(tx, data.requester, user.id)))
        throw new AppError('account_outside_authority');
      await lockAddress(tx, data.email);
      if (await addressTakenByOther(tx, data.email, user.id)) throw new AppError('email_taken');
      const moved = await markAddressProven(tx, user.id, now, data.email);
      await voidFlows(tx, user.id, 'email_verify', now);
      await deps.audit.record(
        tx,
        {
          action: 'user.email.change',
          actor,
          partnerId: ctx.partnerId,
          orgId: ctx.orgId,
          resourceType: 'user',
          resourceId: user.id,
          details: { from: user.email, to: data.email, requestedBy: data.requester?.kind ?? 'self' },
        },
        meta,
      );
      return { email: moved!.email, emailVerified: true as const, changed: true };
    });
    return result;
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('email_taken');
    throw err;
  }
}
