// The SQL of the access core (the one file of src/access that imports drizzle-orm or the schema, as a module's
// repo.ts): the role chain the resolver reads, a tenant's settings for the sign-in address check, and the marking of
// a just-in-time grant seen expired.
import { eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/connect.js';
import { organizations, partners } from '../db/schema/index.js';

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
  return (result as unknown as { rows: Record<string, unknown>[] }).rows;
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
  return (res as unknown as { rows: ExpiredGrantRow[] }).rows[0] ?? null;
}
