// Linked identities: a user lists and removes their own; an administrator reads a member's.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  countOtherIdentities,
  countPasskeys,
  deleteIdentity,
  identitiesWithProviders,
  lockUserPasswordState,
  ownIdentity,
} from './repo.js';

export async function identitiesOf(db: Executor, userId: string) {
  const rows = await identitiesWithProviders(db, userId);
  return {
    data: rows.map((r) => ({
      id: r.i.id,
      providerId: r.i.providerId,
      providerName: r.name,
      type: r.type,
      orgId: r.orgId,
      partnerId: r.partnerId,
      email: r.i.email,
      createdAt: r.i.createdAt.toISOString(),
      lastLoginAt: r.i.lastLoginAt?.toISOString() ?? null,
    })),
  };
}

/**
 * Removes one of the caller's links, unless it is the account's last way in: no password, no passkey and no other
 * link would leave nothing to sign in with (403 last_sign_in_method).
 */
export async function unlinkOwnIdentity(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    // Locks the account row so two removals at once cannot each leave the other as the "remaining" way in.
    const u = await lockUserPasswordState(tx, p.userId);
    const link = await ownIdentity(tx, p.userId, id);
    if (!u || !link) throw notFound('identity');
    const others = await countOtherIdentities(tx, p.userId, id);
    const keys = await countPasskeys(tx, p.userId);
    if (!u.hasPassword && others === 0 && keys === 0) {
      throw new AppError(
        'last_sign_in_method',
        'This identity is your only way to sign in; set a password or add a passkey first.',
      );
    }
    await deleteIdentity(tx, id);
    await deps.audit.record(
      tx,
      {
        action: 'sso.identity.unlink',
        actor: { userId: p.userId, email: p.email },
        partnerId: link.partnerId,
        orgId: link.orgId,
        resourceType: 'sso_identity',
        resourceId: id,
        details: { providerId: link.i.providerId },
      },
      meta,
    );
  });
}
