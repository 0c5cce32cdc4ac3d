// Memberships of a user: which one a sign-in lands in, and whether SSO is enforced on any of them (part of repo.ts).
import { and, desc, eq, isNull, or, sql } from 'drizzle-orm';
import { PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';
import type { Executor } from '../../db/connect.js';
import { provenForTenantSql } from '../../db/domain-proof.js';
import { organizations, organizationUsers, partnerUsers, ssoProviders } from '../../db/schema/index.js';
import type { SessionScope } from './repo-sessions.js';

export interface MembershipRow extends SessionScope {
  lastUsedAt: Date | null;
}

export async function listMemberships(db: Executor, userId: string): Promise<MembershipRow[]> {
  const p = await db
    .select({ partnerId: partnerUsers.partnerId, roleId: partnerUsers.roleId, lastUsedAt: partnerUsers.lastUsedAt })
    .from(partnerUsers)
    .where(eq(partnerUsers.userId, userId))
    .orderBy(desc(partnerUsers.lastUsedAt));
  const o = await db
    .select({
      orgId: organizationUsers.orgId,
      partnerId: organizations.partnerId,
      roleId: organizationUsers.roleId,
      lastUsedAt: organizationUsers.lastUsedAt,
    })
    .from(organizationUsers)
    .innerJoin(organizations, eq(organizations.id, organizationUsers.orgId))
    .where(eq(organizationUsers.userId, userId))
    .orderBy(desc(organizationUsers.lastUsedAt));
  return [
    ...p.map((m) => ({
      scope: 'partner' as const,
      partnerId: m.partnerId,
      orgId: null,
      roleId: m.roleId,
      lastUsedAt: m.lastUsedAt,
    })),
    ...o.map((m) => ({
      scope: 'organization' as const,
      partnerId: m.partnerId,
      orgId: m.orgId,
      roleId: m.roleId,
      lastUsedAt: m.lastUsedAt,
    })),
  ];
}

export async function markMembershipUsed(db: Executor, userId: string, ctx: SessionScope, at: Date): Promise<void> {
  if (ctx.scope === 'partner' && ctx.partnerId)
    await db
      .update(partnerUsers)
      .set({ lastUsedAt: at })
      .where(and(eq(partnerUsers.userId, userId), eq(partnerUsers.partnerId, ctx.partnerId)));
  if (ctx.scope === 'organization' && ctx.orgId)
    await db
      .update(organizationUsers)
      .set({ lastUsedAt: at })
      .where(and(eq(organizationUsers.userId, userId), eq(organizationUsers.orgId, ctx.orgId)));
}

/**
 * True when any of the user's memberships is under an active provider with enforceSSO: the organisation's own
 * provider for organisation members, the partner-owned provider for partner members. An inactive or testing provider
 * never enforces, a provider enforces only on addresses in a domain its tenant has proven, and the partner's
 * administrators (Partner Admin) keep password sign-in: break-glass.
 */
const ENFORCED_ADDRESS = provenForTenantSql('gh_u.email', '"sso_providers"."partner_id"', '"sso_providers"."org_id"');

export async function ssoEnforcedFor(db: Executor, userId: string): Promise<boolean> {
  const rows = await db
    .select({ id: ssoProviders.id })
    .from(ssoProviders)
    .where(
      and(
        eq(ssoProviders.status, 'active'),
        eq(ssoProviders.enforceSso, true),
        or(
          sql`${ssoProviders.orgId} in (select org_id from organization_users where user_id = ${userId})`,
          and(
            isNull(ssoProviders.orgId),
            sql`${ssoProviders.partnerId} in (select partner_id from partner_users where user_id = ${userId})`,
          ),
        ),
        sql`not exists (select 1 from partner_users pu where pu.user_id = ${userId} and pu.partner_id = ${ssoProviders.partnerId} and pu.role_id = ${PARTNER_ADMIN_ROLE_ID})`,
        sql`exists (select 1 from users gh_u where gh_u.id = ${userId} and ${sql.raw(ENFORCED_ADDRESS)})`,
      ),
    )
    .limit(1);
  return rows.length > 0;
}
