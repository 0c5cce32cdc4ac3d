// Tenants: the SQL of organisations (lookups), sites and device groups, and the by-id loads of every resource the
// one by-id rule covers. Lists are limited by the caller's Reach (db/tenant-filter.ts).
import { and, asc, eq, gt, ilike, inArray, or, sql } from 'drizzle-orm';
import type { Executor, Tx } from '../../db/connect.js';
import {
  configItems,
  contacts,
  customFieldDefinitions,
  deviceGroupMembers,
  deviceGroups,
  devices,
  enrollmentKeys,
  organizations,
  partners,
  roles,
  scimTokens,
  scripts,
  serviceAccounts,
  sites,
  domains,
  ssoProviders,
  webhooks,
} from '../../db/schema/index.js';
import { deviceGroupVisible, orgCondition, siteCondition, type Reach } from '../../db/tenant-filter.js';
import { likePrefix } from '../../db/order.js';
import { queryRows, rowsOf } from '../../db/rows.js';

export type OrganizationRow = typeof organizations.$inferSelect;
export type SiteRow = typeof sites.$inferSelect;
export type GroupRow = typeof deviceGroups.$inferSelect;
export type DeviceRow = typeof devices.$inferSelect;
export type EnrollmentKeyRow = typeof enrollmentKeys.$inferSelect;
export type ContactRow = typeof contacts.$inferSelect;
export type SsoProviderRow = typeof ssoProviders.$inferSelect;
export type DomainRow = typeof domains.$inferSelect;
export type WebhookRow = typeof webhooks.$inferSelect;
export type ServiceAccountRow = typeof serviceAccounts.$inferSelect;
export type ScimTokenRow = typeof scimTokens.$inferSelect;

// ---- Organisations

/** One page (plus one row) of the organisations the scope can see, by lower-cased name then id (one index scan). */
export function listOrgRows(
  db: Executor,
  scope: Reach,
  q: { search?: string; after: { n: string; id: string } | null; limit: number },
) {
  const after = q.after;
  return db
    .select()
    .from(organizations)
    .where(
      and(
        orgCondition(scope, organizations.id, organizations.partnerId),
        q.search ? ilike(organizations.name, likePrefix(q.search)) : undefined,
        after ? sql`(lower(${organizations.name}), ${organizations.id}) > (${after.n}, ${after.id})` : undefined,
      ),
    )
    .orderBy(asc(sql`lower(${organizations.name})`), asc(organizations.id))
    .limit(q.limit + 1);
}

export async function insertOrg(tx: Tx, values: typeof organizations.$inferInsert): Promise<OrganizationRow> {
  const [org] = await tx.insert(organizations).values(values).returning();
  return org!;
}

export async function updateOrgRow(
  tx: Tx,
  id: string,
  set: Partial<typeof organizations.$inferInsert>,
): Promise<OrganizationRow> {
  const [org] = await tx.update(organizations).set(set).where(eq(organizations.id, id)).returning();
  return org!;
}

/** Memberships, SSO default roles and roles of the organisation go first: memberships reference roles with RESTRICT. */
export async function clearOrgRoles(tx: Tx, id: string): Promise<void> {
  await tx.execute(sql`delete from organization_users where org_id = ${id}`);
  await tx.execute(sql`update sso_providers set default_role_id = null, auto_provision = false where org_id = ${id}`);
  await tx.execute(sql`update roles set parent_role_id = null where org_id = ${id}`);
  await tx.execute(sql`delete from roles where org_id = ${id}`);
}

export async function deleteOrgRow(tx: Tx, id: string): Promise<void> {
  await tx.delete(organizations).where(eq(organizations.id, id));
}

export async function partnerById(db: Executor, id: string) {
  const [row] = await db.select().from(partners).where(eq(partners.id, id));
  return row;
}

export async function partnerSettings(db: Executor, id: string, forUpdate = false) {
  const q = db.select({ settings: partners.settings }).from(partners).where(eq(partners.id, id));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

export async function updatePartnerRow(tx: Tx, id: string, set: Partial<typeof partners.$inferInsert>): Promise<void> {
  await tx.update(partners).set(set).where(eq(partners.id, id));
}

/** Whether the user is an active member of the partner. */
/** The e-mail of an active account with an active membership of the partner (null: none). */
export async function activePartnerMemberEmail(tx: Tx, partnerId: string, userId: string): Promise<string | null> {
  const [member] = await tx
    .execute(
      sql`select u.email from partner_users pu join users u on u.id = pu.user_id where pu.partner_id = ${partnerId} and pu.user_id = ${userId} and u.status = 'active' and pu.status = 'active'`,
    )
    .then((r) => rowsOf<{ email: string }>(r));
  return member?.email ?? null;
}

/** The organisation's id when it is one of the partner's. */
export async function partnerOrgId(db: Executor, partnerId: string, orgId: string): Promise<string | undefined> {
  const [org] = await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(eq(organizations.id, orgId), eq(organizations.partnerId, partnerId)))
    .limit(1);
  return org?.id;
}

/** Which of the ids are organisations of the partner. */
export const partnerOrgRows = (db: Executor, partnerId: string, ids: string[]) =>
  db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(eq(organizations.partnerId, partnerId), inArray(organizations.id, ids)));

// ---- By-id loads: the row and the partner of its organisation

export async function organizationById(db: Executor, id: string): Promise<OrganizationRow | undefined> {
  const [row] = await db.select().from(organizations).where(eq(organizations.id, id)).limit(1);
  return row;
}

export const siteWithPartner = async (db: Executor, id: string) =>
  (
    await db
      .select({ row: sites, partnerId: organizations.partnerId })
      .from(sites)
      .innerJoin(organizations, eq(organizations.id, sites.orgId))
      .where(eq(sites.id, id))
      .limit(1)
  )[0];

export const groupWithPartner = async (db: Executor, id: string) =>
  (
    await db
      .select({ row: deviceGroups, partnerId: organizations.partnerId })
      .from(deviceGroups)
      .innerJoin(organizations, eq(organizations.id, deviceGroups.orgId))
      .where(eq(deviceGroups.id, id))
      .limit(1)
  )[0];

export const deviceWithPartner = async (db: Executor, id: string) =>
  (
    await db
      .select({ row: devices, partnerId: organizations.partnerId })
      .from(devices)
      .innerJoin(organizations, eq(organizations.id, devices.orgId))
      .where(eq(devices.id, id))
      .limit(1)
  )[0];

export const groupIdsOfDevice = async (db: Executor, deviceId: string) =>
  (
    await db
      .select({ id: deviceGroupMembers.groupId })
      .from(deviceGroupMembers)
      .where(eq(deviceGroupMembers.deviceId, deviceId))
  ).map((g) => g.id);

export const enrollmentKeyWithPartner = async (db: Executor, id: string) =>
  (
    await db
      .select({ row: enrollmentKeys, partnerId: organizations.partnerId })
      .from(enrollmentKeys)
      .innerJoin(organizations, eq(organizations.id, enrollmentKeys.orgId))
      .where(eq(enrollmentKeys.id, id))
      .limit(1)
  )[0];

export const contactWithPartner = async (db: Executor, id: string) =>
  (
    await db
      .select({ row: contacts, partnerId: organizations.partnerId })
      .from(contacts)
      .innerJoin(organizations, eq(organizations.id, contacts.orgId))
      .where(eq(contacts.id, id))
      .limit(1)
  )[0];

/** Tables with partner_id and a nullable org_id (partner-wide configuration). */
export const PARTNER_WIDE = { scripts, customFieldDefinitions, configItems };
export type PartnerWideTable = (typeof PARTNER_WIDE)[keyof typeof PARTNER_WIDE];
export async function partnerWideById<T extends PartnerWideTable>(
  db: Executor,
  table: T,
  id: string,
): Promise<T['$inferSelect'] | undefined> {
  const [row] = (await db
    .select()
    .from(table as typeof scripts)
    .where(eq((table as typeof scripts).id, id))
    .limit(1)) as T['$inferSelect'][];
  return row;
}

export const ssoProviderById = async (db: Executor, id: string) =>
  (await db.select().from(ssoProviders).where(eq(ssoProviders.id, id)).limit(1))[0];
export const domainById = async (db: Executor, id: string) =>
  (await db.select().from(domains).where(eq(domains.id, id)).limit(1))[0];
export const webhookById = async (db: Executor, id: string) =>
  (await db.select().from(webhooks).where(eq(webhooks.id, id)).limit(1))[0];
export const serviceAccountById = async (db: Executor, id: string) =>
  (await db.select().from(serviceAccounts).where(eq(serviceAccounts.id, id)).limit(1))[0];
export const scimTokenById = async (db: Executor, id: string) =>
  (await db.select().from(scimTokens).where(eq(scimTokens.id, id)).limit(1))[0];

// ---- Sites

const siteVisible = (s: Reach) => and(orgCondition(s, sites.orgId), siteCondition(s, sites.id));

/** One page (plus one row) of the sites the scope can see, by lower-cased name then id. */
export function listSiteRows(
  db: Executor,
  scope: Reach,
  q: { orgId?: string; search?: string; after: { n: string; id: string } | null; limit: number },
) {
  const after = q.after;
  return db
    .select()
    .from(sites)
    .where(
      and(
        siteVisible(scope),
        q.orgId ? eq(sites.orgId, q.orgId) : undefined,
        q.search ? ilike(sites.name, likePrefix(q.search)) : undefined,
        after
          ? or(
              gt(sql`lower(${sites.name})`, after.n),
              and(eq(sql`lower(${sites.name})`, after.n), gt(sites.id, after.id)),
            )
          : undefined,
      ),
    )
    .orderBy(asc(sql`lower(${sites.name})`), asc(sites.id))
    .limit(q.limit + 1);
}

export async function insertSite(tx: Tx, values: typeof sites.$inferInsert): Promise<SiteRow> {
  const [row] = await tx.insert(sites).values(values).returning();
  return row!;
}

export async function updateSiteRow(tx: Tx, id: string, set: Partial<typeof sites.$inferInsert>): Promise<SiteRow> {
  const [row] = await tx.update(sites).set(set).where(eq(sites.id, id)).returning();
  return row!;
}

export async function deviceCountOfSite(tx: Tx, siteId: string): Promise<number> {
  const [d] = await tx.select({ n: sql<number>`count(*)::int` }).from(devices).where(eq(devices.siteId, siteId));
  return Number(d?.n ?? 0);
}

export async function deleteSiteRow(tx: Tx, id: string): Promise<void> {
  await tx.delete(sites).where(eq(sites.id, id));
}

// ---- Device groups

/** Devices of each group at the sites the scope can see (the group itself is visible; the site restriction remains). */
export const groupDeviceCounts = (db: Executor, scope: Reach, groupIds: string[]) =>
  db
    .select({ groupId: deviceGroupMembers.groupId, n: sql<number>`count(*)::int` })
    .from(deviceGroupMembers)
    .innerJoin(devices, eq(devices.id, deviceGroupMembers.deviceId))
    .where(and(inArray(deviceGroupMembers.groupId, groupIds), siteCondition(scope, devices.siteId)))
    .groupBy(deviceGroupMembers.groupId);

/** One page (plus one row) of an organisation's groups the scope can see, by lower-cased name then id. */
export function listGroupRows(
  db: Executor,
  scope: Reach,
  q: { orgId: string; search?: string; after: { n: string; id: string } | null; limit: number },
) {
  const after = q.after;
  return db
    .select()
    .from(deviceGroups)
    .where(
      and(
        deviceGroupVisible(scope),
        eq(deviceGroups.orgId, q.orgId),
        q.search ? ilike(deviceGroups.name, likePrefix(q.search)) : undefined,
        after
          ? or(
              gt(sql`lower(${deviceGroups.name})`, after.n),
              and(eq(sql`lower(${deviceGroups.name})`, after.n), gt(deviceGroups.id, after.id)),
            )
          : undefined,
      ),
    )
    .orderBy(asc(sql`lower(${deviceGroups.name})`), asc(deviceGroups.id))
    .limit(q.limit + 1);
}

export async function insertGroup(tx: Tx, values: typeof deviceGroups.$inferInsert): Promise<GroupRow> {
  const [row] = await tx.insert(deviceGroups).values(values).returning();
  return row!;
}

export async function updateGroupRow(
  tx: Tx,
  id: string,
  set: Partial<typeof deviceGroups.$inferInsert>,
): Promise<GroupRow> {
  const [row] = await tx.update(deviceGroups).set(set).where(eq(deviceGroups.id, id)).returning();
  return row!;
}

export async function deleteGroupRow(tx: Tx, id: string): Promise<void> {
  await tx.delete(deviceGroups).where(eq(deviceGroups.id, id));
}

/**
 * The ids among `ids` of roles a tenant's security policy may name: the built-in roles, and the partner's own (for an
 * organisation, the partner's and the organisation's own, never another organisation's).
 */
export async function rolesNamableBy(
  db: Executor,
  partnerId: string,
  orgId: string | null,
  ids: string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: roles.id })
    .from(roles)
    .where(
      and(
        inArray(roles.id, ids),
        or(
          sql`${roles.partnerId} is null`,
          and(
            eq(roles.partnerId, partnerId),
            orgId ? or(sql`${roles.orgId} is null`, eq(roles.orgId, orgId)) : sql`true`,
          ),
        ),
      ),
    );
  return new Set(rows.map((r) => r.id));
}

// ---- Getting started

export interface GettingStartedRow {
  name: string;
  settings: unknown;
  organization: boolean;
  technician: boolean;
  staff_sso: boolean;
  first_device: boolean;
  audit_webhook: boolean;
}

/** The partner's state behind each getting-started step. A pending invitation counts: the technician was invited. */
export async function gettingStartedState(db: Executor, partnerId: string): Promise<GettingStartedRow | null> {
  const [row] = await queryRows<GettingStartedRow>(
    db,
    sql`select p.name, p.settings,
      exists(select 1 from organizations o where o.partner_id = p.id) as organization,
      (select count(*) from partner_users m where m.partner_id = p.id) > 1 as technician,
      exists(select 1 from sso_providers s where s.partner_id = p.id and s.org_id is null and s.status = 'active') as staff_sso,
      exists(select 1 from devices d where d.partner_id = p.id) as first_device,
      exists(select 1 from webhooks w where w.partner_id = p.id and w.org_id is null and w.active) as audit_webhook
    from partners p where p.id = ${partnerId}`,
  );
  return row ?? null;
}
