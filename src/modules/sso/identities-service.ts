// Linked identities (issue 13): a user lists and removes their own; an administrator reads a member's.
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { passkeys, ssoIdentities, ssoProviders, users } from '../../db/schema/index.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';

export async function identitiesOf(db: Executor, userId: string) {
  const rows = await db
    .select({
      i: ssoIdentities,
      name: ssoProviders.name,
      type: ssoProviders.type,
      orgId: ssoProviders.orgId,
      partnerId: ssoProviders.partnerId,
    })
    .from(ssoIdentities)
    .innerJoin(ssoProviders, eq(ssoProviders.id, ssoIdentities.providerId))
    .where(eq(ssoIdentities.userId, userId))
    .orderBy(asc(ssoIdentities.createdAt), asc(ssoIdentities.id));
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
    const [u] = await tx
      .select({ hasPassword: sql<boolean>`${users.passwordHash} is not null` })
      .from(users)
      .where(eq(users.id, p.userId))
      .for('update');
    const [link] = await tx
      .select({ i: ssoIdentities, partnerId: ssoProviders.partnerId, orgId: ssoProviders.orgId })
      .from(ssoIdentities)
      .innerJoin(ssoProviders, eq(ssoProviders.id, ssoIdentities.providerId))
      .where(and(eq(ssoIdentities.id, id), eq(ssoIdentities.userId, p.userId)));
    if (!u || !link) throw notFound('identity');
    const [others] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(ssoIdentities)
      .where(and(eq(ssoIdentities.userId, p.userId), ne(ssoIdentities.id, id)));
    const [keys] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(passkeys)
      .where(eq(passkeys.userId, p.userId));
    if (!u.hasPassword && Number(others?.n ?? 0) === 0 && Number(keys?.n ?? 0) === 0) {
      throw new AppError(
        'last_sign_in_method',
        'This identity is your only way to sign in; set a password or add a passkey first.',
      );
    }
    await tx.delete(ssoIdentities).where(eq(ssoIdentities.id, id));
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
