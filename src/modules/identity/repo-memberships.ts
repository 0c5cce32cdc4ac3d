// Memberships of a user: which one a sign-in lands in, and which of them SSO enforcement holds (part of repo.ts).
import { and, desc, eq, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';
import type { Executor } from '../../db/connect.js';
import { provenForTenantSql } from '../../db/domain-proof.js';
import { organizations, organizationUsers, partnerUsers } from '../../db/schema/index.js';
import type { SessionScope } from './repo-sessions.js';

export interface MembershipRow extends SessionScope {
  lastUsedAt: Date | null;
  /** An active provider with enforceSSO holds this membership: a password or passkey does not sign in to it. */
  ssoOnly: boolean;
}

/**
 * SSO enforcement is per membership (SQL over a membership row aliased `m`): an organisation membership is held by its
 * organisation's enforcing provider, a partner membership by the partner-owned one, except a Partner Admin's, who keeps
 * password sign-in to the partner (break-glass). Another tenant's provider never holds the membership, and a provider
 * holds only addresses in a domain its tenant has proven. The password
 * sign-in statement (auth) reads the same text.
 */
const MEMBER_ADDRESS_PROVEN = provenForTenantSql(
  '(select gh_mu.email from users gh_mu where gh_mu.id = m.user_id)',
  'sp.partner_id',
  'sp.org_id',
);
export const PARTNER_SSO_ONLY = `(exists (select 1 from sso_providers sp where sp.status = 'active' and sp.enforce_sso
   and sp.org_id is null and sp.partner_id = m.partner_id and ${MEMBER_ADDRESS_PROVEN})
   and m.role_id <> '${PARTNER_ADMIN_ROLE_ID}'::uuid)`;
export const ORG_SSO_ONLY = `exists (select 1 from sso_providers sp where sp.status = 'active' and sp.enforce_sso
   and sp.org_id = m.org_id and ${MEMBER_ADDRESS_PROVEN})`;

/** Password (or passkey) sign-in is refused only when every membership of the account needs SSO. */
export const ssoOnlyEverywhere = (memberships: readonly { ssoOnly: boolean }[]) =>
  memberships.length > 0 && memberships.every((m) => m.ssoOnly);

export async function listMemberships(db: Executor, userId: string): Promise<MembershipRow[]> {
  const m = alias(partnerUsers, 'm');
  const p = await db
    .select({
      partnerId: m.partnerId,
      roleId: m.roleId,
      lastUsedAt: m.lastUsedAt,
      ssoOnly: sql<boolean>`${sql.raw(PARTNER_SSO_ONLY)}`,
    })
    .from(m)
    .where(and(eq(m.userId, userId), eq(m.status, 'active')))
    .orderBy(desc(m.lastUsedAt));
  const om = alias(organizationUsers, 'm');
  const o = await db
    .select({
      orgId: om.orgId,
      partnerId: organizations.partnerId,
      roleId: om.roleId,
      lastUsedAt: om.lastUsedAt,
      ssoOnly: sql<boolean>`${sql.raw(ORG_SSO_ONLY)}`,
    })
    .from(om)
    .innerJoin(organizations, eq(organizations.id, om.orgId))
    .where(and(eq(om.userId, userId), eq(om.status, 'active')))
    .orderBy(desc(om.lastUsedAt));
  return [
    ...p.map((r) => ({
      scope: 'partner' as const,
      partnerId: r.partnerId,
      orgId: null,
      roleId: r.roleId,
      lastUsedAt: r.lastUsedAt,
      ssoOnly: r.ssoOnly === true,
    })),
    ...o.map((r) => ({
      scope: 'organization' as const,
      partnerId: r.partnerId,
      orgId: r.orgId,
      roleId: r.roleId,
      lastUsedAt: r.lastUsedAt,
      ssoOnly: r.ssoOnly === true,
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

/** True when no membership of the account may be signed in to without SSO (see ssoOnlyEverywhere). */
export async function ssoEnforcedFor(db: Executor, userId: string): Promise<boolean> {
  return ssoOnlyEverywhere(await listMemberships(db, userId));
}
