// The SQL of the access core (the one file of src/access that imports drizzle-orm or the schema, as a module's
// repo.ts): the role chain the resolver reads, a tenant's settings for the sign-in address check, the marking of
// a just-in-time grant seen expired, the caller's liveness statement and its membership fragments (caller.ts), the
// pipeline's statements (the last-seen write, step-up's factors),
// the authorisation epoch, both sides' admins (mailed by tenants and the governance module) and an account's active
// memberships (the account-wide authority).
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/connect.js';
import { preparedStatement, uuidArg } from '../db/prepared.js';
import { asSystemWithin } from '../db/row-security.js';
import { organizations, organizationUsers, partners, partnerUsers } from '../db/schema/index.js';
import { ORG_ADMIN_ROLE_ID, PARTNER_ADMIN_ROLE_ID } from './catalog.js';
import { rowsOf } from '../db/rows.js';
import type { OrgAccessMode } from './principal.js';
import { ACCESS_GROUPS_SQL, RELATIONSHIPS_SQL, type RelationshipRow } from './relationships.js';

/** A role and its ancestors (at most `maxDepth`), each with its own permissions, nearest first. */
export async function roleChainRows(
  db: Executor,
  roleId: string,
  maxDepth: number,
): Promise<Record<string, unknown>[]> {
  const result = await db.execute(sql`
    with recursive chain(id, parent_role_id, depth) as (
      select id, parent_role_id, 0 from roles where id = ${roleId}
      union all
      select r.id, r.parent_role_id, c.depth + 1 from roles r join chain c on r.id = c.parent_role_id
      where c.depth < ${maxDepth - 1}
    )
    select c.id as role_id, r.name, r.force_mfa, r.phishing_resistant_only, c.depth, p.resource, p.action
    from chain c
    join roles r on r.id = c.id
    left join role_permissions rp on rp.role_id = c.id
    left join permissions p on p.id = rp.permission_id
    order by c.depth, p.resource, p.action`);
  return rowsOf<Record<string, unknown>>(result);
}

/** The settings of the tenant a sign-in enters: the partner's for a partner membership, else the organisation's. */
export async function membershipTenantSettings(
  tx: Executor,
  ctx: { scope: 'partner' | 'organization' | null; partnerId: string | null; orgId: string | null },
): Promise<unknown> {
  const [row] =
    ctx.scope === 'partner'
      ? await tx.select({ settings: partners.settings }).from(partners).where(eq(partners.id, ctx.partnerId!))
      : await tx
          .select({ settings: organizations.settings })
          .from(organizations)
          .where(eq(organizations.id, ctx.orgId!));
  return row?.settings;
}

export interface ExpiredGrantRow {
  partner_id: string;
  org_id: string;
  site_id: string | null;
  user_id: string;
  expires_at: Date | string;
  request_id: string;
  reason: string;
  ticket_ref: string | null;
}

/** Marks a grant past its end expired, once (null when already marked, revoked or not yet over). */
export async function markGrantExpired(tx: Executor, grantId: string, at: Date): Promise<ExpiredGrantRow | null> {
  const res = await tx.execute(sql`update access_grants g set expired_at = ${at} from access_requests r
    where g.id = ${grantId} and r.id = g.request_id and g.expired_at is null and g.revoked_at is null and g.expires_at <= ${at}
    returning g.partner_id, g.org_id, g.site_id, g.user_id, g.expires_at, g.request_id, r.reason, r.ticket_ref`);
  return rowsOf<ExpiredGrantRow>(res)[0] ?? null;
}

/** Writes a session's last-seen; the condition repeats the interval so that instances racing on one session write it once. */
export async function touchSessionRow(db: Executor, sid: string, at: Date, before: Date): Promise<void> {
  await db.execute(
    sql`update sessions set last_used_at = ${at} where id = ${sid} and (last_used_at is null or last_used_at <= ${before})`,
  );
}

/** Ends a live session (its tenant's session or idle lifetime has passed). */
export async function endSessionRow(db: Executor, sid: string, reason: string, at: Date): Promise<void> {
  await db.execute(
    sql`update sessions set revoked_at = ${at}, revoke_reason = ${reason} where id = ${sid} and revoked_at is null`,
  );
}

export interface StepUpFactorsRow {
  has_password: boolean;
  has_totp: boolean;
  has_sms: boolean;
  has_passkey: boolean;
}

/** Which proofs an account holds for a step-up: a password, TOTP, a verified SMS number, a passkey (undefined: no user). */
export async function stepUpFactorsRow(db: Executor, userId: string): Promise<StepUpFactorsRow | undefined> {
  const result = await db.execute(sql`
    select u.password_hash is not null as has_password, u.mfa_secret is not null as has_totp,
           (u.mfa_method = 'sms' and u.phone_verified and u.phone_number is not null) as has_sms,
           exists (select 1 from passkeys k where k.user_id = u.id) as has_passkey
    from users u where u.id = ${userId}`);
  return rowsOf<StepUpFactorsRow>(result)[0];
}

/**
 * Bumps the authorisation epoch (the resolver's cache key): in the same transaction as any change to a role, its
 * parent, its permissions or its Force MFA flag, or to what a tenant's settings decide (assignments are read live).
 */
export async function bumpAuthzEpoch(tx: Executor): Promise<void> {
  await tx.execute(sql`update authz_state set epoch = epoch + 1 where id = 1`);
}

/**
 * (`freeze` is a reserved word of PostgreSQL: quoted.)
 * What the governor weighs for a partner and those of its organisations that set any of it: freezes in force and governor settings (budgets,
 * co-signature policy). Few rows; read once per authorisation epoch by GovernorCache.
 */
export async function governorRows(
  db: Executor,
  partnerId: string,
): Promise<{ partner_id: string; org_id: string | null; freeze: unknown; governor: unknown }[]> {
  const res = await db.execute(sql`
    select id as partner_id, null::uuid as org_id, "freeze", settings->'governor' as governor from partners
      where id = ${partnerId} and ("freeze" is not null or settings->'governor' is not null)
    union all
    select partner_id, id, "freeze", settings->'governor' from organizations
      where partner_id = ${partnerId} and ("freeze" is not null or settings->'governor' is not null)`);
  return rowsOf(res);
}

/** The partner's active Partner Admins (the system admin role) and the partner's name: whom partner-wide changes are mailed to. */
export async function partnerAdmins(tx: Executor, partnerId: string) {
  const res = await tx.execute(sql`
    select u.email from partner_users pu join users u on u.id = pu.user_id
      where pu.partner_id = ${partnerId} and pu.role_id = ${PARTNER_ADMIN_ROLE_ID} and pu.status = 'active'
        and u.status = 'active'
    order by 1 limit 500`);
  const [p] = await tx.select({ name: partners.name }).from(partners).where(eq(partners.id, partnerId));
  return {
    emails: rowsOf<{ email: string }>(res).map((r) => r.email),
    partnerName: p?.name ?? 'the partner',
  };
}

/**
 * Who "both sides' admins" are: the partner's active Partner Admins and the organisation's active
 * Organization Admins (the system admin roles), whom mspAccess changes (tenants) and break-glass uses (access) are
 * mailed to; with both names.
 */
export async function adminsOfBothSides(tx: Executor, partnerId: string, orgId: string) {
  const res = await tx.execute(sql`
    select u.email from partner_users pu join users u on u.id = pu.user_id
      where pu.partner_id = ${partnerId} and pu.role_id = ${PARTNER_ADMIN_ROLE_ID} and pu.status = 'active'
        and u.status = 'active'
    union
    select u.email from organization_users ou join users u on u.id = ou.user_id
      where ou.org_id = ${orgId} and ou.role_id = ${ORG_ADMIN_ROLE_ID} and ou.status = 'active'
        and u.status = 'active'
    order by 1 limit 500`);
  const names = await tx.execute(
    sql`select o.name as org_name, p.name as partner_name from organizations o join partners p on p.id = o.partner_id where o.id = ${orgId}`,
  );
  const n = rowsOf<{ org_name: string; partner_name: string }>(names)[0];
  return {
    emails: rowsOf<{ email: string }>(res).map((r) => r.email),
    orgName: n?.org_name ?? 'the organisation',
    partnerName: n?.partner_name ?? 'the partner',
  };
}

export interface ActiveMembershipRows {
  partner: { partnerId: string; roleId: string; orgAccess: string; orgIds: string[] }[];
  organization: {
    partnerId: string;
    orgId: string;
    roleId: string;
    siteIds: string[] | null;
    deviceGroupIds: string[] | null;
  }[];
}

/**
 * Every active membership of an account, in every tenant (system context `account-wide`): what an account-wide
 * decision counts. A pending membership is not yet the account's and is left out.
 */
export async function activeMembershipRows(ex: Executor, userId: string): Promise<ActiveMembershipRows> {
  return asSystemWithin(ex, 'account-wide', async () => {
    const partner = await ex
      .select({
        partnerId: partnerUsers.partnerId,
        roleId: partnerUsers.roleId,
        orgAccess: partnerUsers.orgAccess,
        orgIds: partnerUsers.orgIds,
      })
      .from(partnerUsers)
      .where(and(eq(partnerUsers.userId, userId), eq(partnerUsers.status, 'active')));
    const organization = await ex
      .select({
        partnerId: organizations.partnerId,
        orgId: organizationUsers.orgId,
        roleId: organizationUsers.roleId,
        siteIds: organizationUsers.siteIds,
        deviceGroupIds: organizationUsers.deviceGroupIds,
      })
      .from(organizationUsers)
      .innerJoin(organizations, eq(organizations.id, organizationUsers.orgId))
      .where(and(eq(organizationUsers.userId, userId), eq(organizationUsers.status, 'active')));
    return { partner, organization };
  });
}

/** Where every membership of an account lies, pending ones included (system context `account-wide`). */
export async function membershipPlaces(
  ex: Executor,
  userId: string,
): Promise<{ partnerId: string; orgId: string | null }[]> {
  return asSystemWithin(ex, 'account-wide', async () => {
    const partner = await ex
      .select({ partnerId: partnerUsers.partnerId })
      .from(partnerUsers)
      .where(eq(partnerUsers.userId, userId));
    const organization = await ex
      .select({ partnerId: organizations.partnerId, orgId: organizationUsers.orgId })
      .from(organizationUsers)
      .innerJoin(organizations, eq(organizations.id, organizationUsers.orgId))
      .where(eq(organizationUsers.userId, userId));
    return [...partner.map((m) => ({ partnerId: m.partnerId, orgId: null })), ...organization];
  });
}

/**
 * A partner's organisations that set policies on partner members acting in them (an IP allow-list, mspAccess), as
 * id → settings: usually none, so the aggregate is empty; read with the session, so a change bites on the next request.
 * A fragment over the columns named: the liveness statement, explain's subjects and service accounts read it alike.
 */
export const ORG_POLICIES_SQL = (kind: string, partnerId: string) =>
  `(select jsonb_object_agg(po.id, po.settings) from organizations po where ${kind} = 'partner' and po.partner_id = ${partnerId}
     and po.sets_partner_policies)`;

export interface GrantRow {
  id: string;
  org_id: string;
  site_id: string | null;
  expires_at: string;
  approval: 'auto' | 'partner_admin' | 'customer_admin';
}

/**
 * A partner member's just-in-time grants not revoked and not yet seen expired, read with the session on
 * every request: a grant ends on the next request, on every instance. Which of them are still in force is decided
 * against the service clock (splitGrants), and the expired ones are recorded once (recordExpiredGrants).
 */
export const GRANTS_SQL = (kind: string, partnerId: string, userId: string) =>
  `(select jsonb_agg(jsonb_build_object('id', g.id, 'org_id', g.org_id, 'site_id', g.site_id, 'expires_at', g.expires_at, 'approval', g.approval))
     from access_grants g where ${kind} = 'partner' and g.partner_id = ${partnerId} and g.user_id = ${userId} and g.revoked_at is null and g.expired_at is null)`;

/** The row of the liveness statement: a session with its user, membership, tenant settings and the authz epoch. */
export interface SessionRow {
  session_id: string;
  user_id: string;
  email: string;
  user_status: string;
  mfa_enabled: boolean;
  session_mfa: boolean;
  /** The kind of membership the session acts in (the sessions.scope column); null between memberships. */
  scope: 'partner' | 'organization' | null;
  partner_id: string | null;
  org_id: string | null;
  revoked_at: Date | string | null;
  expires_at: Date | string;
  absolute_expires_at: Date | string;
  auth_time: Date | string | null;
  /** The proof that last renewed auth_time (null: the sign-in's). */
  auth_method: string | null;
  last_used_at: Date | string | null;
  session_method: string | null;
  has_passkey: boolean;
  pu_role_id: string | null;
  org_access: OrgAccessMode | null;
  pu_org_ids: string[] | string | null;
  ou_role_id: string | null;
  site_ids: string[] | string | null;
  device_group_ids: string[] | string | null;
  partner_settings: unknown;
  org_settings: unknown;
  org_partner_id: string | null;
  org_partner_settings: unknown;
  /** Partner sessions: the partner's organisations that set policies on partner members, id → settings. */
  org_policies: Record<string, unknown> | string | null;
  /** Partner sessions: the member's just-in-time grants neither revoked nor yet seen expired (GRANTS_SQL). */
  jit_grants: GrantRow[] | string | null;
  /** Partner sessions of a partner requiring relationships: its active relationships (RELATIONSHIPS_SQL). */
  relationships?: RelationshipRow[] | string | null;
  /** Partner sessions of a partner requiring relationships: the member's access groups (ACCESS_GROUPS_SQL). */
  access_groups?: string[] | string | null;
  epoch: number | string;
  user_name: string;
  avatar_url: string | null;
  mfa_method: 'totp' | 'sms' | 'passkey' | null;
  phone_verified: boolean;
  email_verified: boolean;
  phone_last4: string | null;
  last_login_at: Date | string | null;
  user_created_at: Date | string;
}

/** What a person's membership is made of: the columns of the liveness statement without the session's own. */
export type MembershipFacts = Omit<
  SessionRow,
  | 'session_id'
  | 'session_mfa'
  | 'revoked_at'
  | 'expires_at'
  | 'absolute_expires_at'
  | 'auth_time'
  | 'auth_method'
  | 'last_used_at'
  | 'session_method'
>;

/**
 * The one statement of an authenticated request: session, user (profile fields, never the password hash, TOTP secret
 * or recovery codes), membership, tenant settings and the authz epoch. Prepared by name on both databases, so it is
 * parsed and planned once per connection instead of on every request.
 */
export const livenessStatement = preparedStatement<SessionRow, [string, string]>(
  'gh_liveness',
  `select s.id as session_id, u.id as user_id, u.email, u.status as user_status, u.mfa_enabled, s.mfa as session_mfa,
          u.name as user_name, u.avatar_url, u.mfa_method, u.phone_verified, u.email_verified, right(u.phone_number, 4) as phone_last4,
          u.last_login_at, u.created_at as user_created_at,
          s.scope, s.partner_id, s.org_id, s.revoked_at, s.expires_at, s.absolute_expires_at,
          s.auth_time, s.auth_method, s.last_used_at, s.method as session_method,
          exists (select 1 from passkeys k where k.user_id = s.user_id) as has_passkey,
          pu.role_id as pu_role_id, pu.org_access, pu.org_ids as pu_org_ids,
          ou.role_id as ou_role_id, ou.site_ids, ou.device_group_ids,
          p.settings as partner_settings, o.settings as org_settings, o.partner_id as org_partner_id,
          op.settings as org_partner_settings,
          ${ORG_POLICIES_SQL('s.scope', 's.partner_id')} as org_policies,
          ${GRANTS_SQL('s.scope', 's.partner_id', 's.user_id')} as jit_grants,
          ${RELATIONSHIPS_SQL('s.scope', 's.partner_id', 'p.settings')} as relationships,
          ${ACCESS_GROUPS_SQL('s.scope', 's.partner_id', 's.user_id', 'p.settings')} as access_groups,
          (select epoch from authz_state where id = 1) as epoch
   from sessions s
   join users u on u.id = s.user_id
   left join partner_users pu on s.scope = 'partner' and pu.partner_id = s.partner_id and pu.user_id = s.user_id
     and pu.status = 'active'
   left join organization_users ou on s.scope = 'organization' and ou.org_id = s.org_id and ou.user_id = s.user_id
     and ou.status = 'active'
   left join partners p on p.id = s.partner_id
   left join organizations o on o.id = s.org_id
   left join partners op on op.id = o.partner_id
   where s.id = $1 and s.user_id = $2`,
  [uuidArg, uuidArg],
);
