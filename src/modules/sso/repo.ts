// The SQL of the SSO module: providers (tenant-owned, filtered through src/db/tenant-filter.ts), the
// browser-bound SSO sessions of a sign-in, linked identities, and what a federated sign-in reads and writes of
// accounts and memberships.
import { and, asc, eq, isNull, ne, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import {
  organizationUsers,
  organizations,
  partnerUsers,
  passkeys,
  ssoIdentities,
  ssoProviders,
  ssoSessions,
  users,
} from '../../db/schema/index.js';
import { ownedBy, type Target } from '../../db/tenant-filter.js';
import { rowsOf } from '../../db/rows.js';

export type ProviderRow = typeof ssoProviders.$inferSelect;
export type NewProvider = typeof ssoProviders.$inferInsert;
export type IdentityRow = typeof ssoIdentities.$inferSelect;
export type UserRow = typeof users.$inferSelect;
type NewSsoSession = Omit<typeof ssoSessions.$inferInsert, 'id' | 'createdAt' | 'consumedAt'>;

// Providers.

export async function findProviderById(db: Executor, id: string): Promise<ProviderRow | undefined> {
  const [p] = await db.select().from(ssoProviders).where(eq(ssoProviders.id, id));
  return p;
}

export async function findSamlProviderById(db: Executor, id: string): Promise<ProviderRow | undefined> {
  const [p] = await db
    .select()
    .from(ssoProviders)
    .where(and(eq(ssoProviders.id, id), eq(ssoProviders.type, 'saml')))
    .limit(1);
  return p;
}

export async function providerNameAndType(
  db: Executor,
  id: string,
): Promise<Pick<ProviderRow, 'name' | 'type'> | undefined> {
  const [p] = await db
    .select({ name: ssoProviders.name, type: ssoProviders.type })
    .from(ssoProviders)
    .where(eq(ssoProviders.id, id));
  return p;
}

/** The active provider of an organisation, or the partner-owned one when the id is a partner's. */
export async function activeProviderOf(db: Executor, ownerId: string): Promise<ProviderRow | undefined> {
  const [p] = await db
    .select()
    .from(ssoProviders)
    .where(
      and(
        eq(ssoProviders.status, 'active'),
        sql`(${ssoProviders.orgId} = ${ownerId} or (${ssoProviders.orgId} is null and ${ssoProviders.partnerId} = ${ownerId}))`,
      ),
    )
    .limit(1);
  return p;
}

/** The oldest active provider of exactly this tenant that names this e-mail domain. */
export async function activeProviderForDomain(
  db: Executor,
  owner: { partnerId: string; orgId: string | null },
  domain: string,
): Promise<ProviderRow | undefined> {
  const [p] = await db
    .select()
    .from(ssoProviders)
    .where(
      and(
        eq(ssoProviders.status, 'active'),
        eq(ssoProviders.partnerId, owner.partnerId),
        owner.orgId ? eq(ssoProviders.orgId, owner.orgId) : isNull(ssoProviders.orgId),
        sql`${domain} = any(string_to_array(${ssoProviders.allowedDomains}, ','))`,
      ),
    )
    .orderBy(ssoProviders.createdAt)
    .limit(1);
  return p;
}

export async function findOwnedProvider(db: Executor, t: Target, id: string): Promise<ProviderRow | undefined> {
  const [row] = await db
    .select()
    .from(ssoProviders)
    .where(and(eq(ssoProviders.id, id), ownedBy(t, ssoProviders)))
    .limit(1);
  return row;
}

export const listOwnedProviders = (db: Executor, t: Target): Promise<ProviderRow[]> =>
  db.select().from(ssoProviders).where(ownedBy(t, ssoProviders)).orderBy(asc(ssoProviders.name), asc(ssoProviders.id));

/** Whether another provider of this owner is active. */
export async function otherActiveProvider(db: Executor, t: Target, id: string): Promise<boolean> {
  const [other] = await db
    .select({ id: ssoProviders.id })
    .from(ssoProviders)
    .where(and(ownedBy(t, ssoProviders), eq(ssoProviders.status, 'active'), ne(ssoProviders.id, id)))
    .limit(1);
  return Boolean(other);
}

export async function insertProvider(db: Executor, values: NewProvider): Promise<ProviderRow> {
  const [row] = await db.insert(ssoProviders).values(values).returning();
  return row!;
}

export async function updateProviderRow(db: Executor, id: string, set: Partial<NewProvider>): Promise<ProviderRow> {
  const [row] = await db.update(ssoProviders).set(set).where(eq(ssoProviders.id, id)).returning();
  return row!;
}

/** Deletes the provider; its identities go with it (cascade). */
export async function deleteProviderRow(db: Executor, id: string): Promise<void> {
  await db.delete(ssoProviders).where(eq(ssoProviders.id, id));
}

// SSO sessions (OIDC state or SAML request id, bound to the browser).

export async function insertSsoSession(db: Executor, values: NewSsoSession): Promise<void> {
  await db.insert(ssoSessions).values(values);
}

export async function ssoSessionByState(db: Executor, stateHash: string) {
  const [row] = await db.select().from(ssoSessions).where(eq(ssoSessions.stateHash, stateHash)).limit(1);
  return row;
}

/** Consumes the session if nobody has; true for the one caller that did. */
export async function takeSsoSession(db: Executor, id: string, now: Date): Promise<boolean> {
  const taken = await db
    .update(ssoSessions)
    .set({ consumedAt: now })
    .where(and(eq(ssoSessions.id, id), isNull(ssoSessions.consumedAt)))
    .returning({ id: ssoSessions.id });
  return taken.length > 0;
}

// Linked identities.

/** A user's links with their providers, oldest first. */
export const identitiesWithProviders = (db: Executor, userId: string) =>
  db
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

/** One of the user's links with its provider's tenant. */
export async function ownIdentity(db: Executor, userId: string, id: string) {
  const [link] = await db
    .select({ i: ssoIdentities, partnerId: ssoProviders.partnerId, orgId: ssoProviders.orgId })
    .from(ssoIdentities)
    .innerJoin(ssoProviders, eq(ssoProviders.id, ssoIdentities.providerId))
    .where(and(eq(ssoIdentities.id, id), eq(ssoIdentities.userId, userId)));
  return link;
}

/** How many links the user holds besides `exceptId`. */
export async function countOtherIdentities(db: Executor, userId: string, exceptId: string): Promise<number> {
  const [others] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(ssoIdentities)
    .where(and(eq(ssoIdentities.userId, userId), ne(ssoIdentities.id, exceptId)));
  return Number(others?.n ?? 0);
}

export async function countPasskeys(db: Executor, userId: string): Promise<number> {
  const [keys] = await db.select({ n: sql<number>`count(*)::int` }).from(passkeys).where(eq(passkeys.userId, userId));
  return Number(keys?.n ?? 0);
}

export async function deleteIdentity(db: Executor, id: string): Promise<void> {
  await db.delete(ssoIdentities).where(eq(ssoIdentities.id, id));
}

/** Unlinks every identity of a provider; the number removed. */
export async function deleteIdentitiesOf(db: Executor, providerId: string): Promise<number> {
  return (
    await db.delete(ssoIdentities).where(eq(ssoIdentities.providerId, providerId)).returning({ id: ssoIdentities.id })
  ).length;
}

/** Removes the account's links at this provider to any subject but `subject`. */
export async function deleteOtherSubjects(db: Executor, providerId: string, userId: string, subject: string) {
  await db
    .delete(ssoIdentities)
    .where(
      and(
        eq(ssoIdentities.providerId, providerId),
        eq(ssoIdentities.userId, userId),
        ne(ssoIdentities.subject, subject),
      ),
    );
}

export async function identityBySubject(
  db: Executor,
  providerId: string,
  subject: string,
): Promise<IdentityRow | undefined> {
  const [link] = await db
    .select()
    .from(ssoIdentities)
    .where(and(eq(ssoIdentities.providerId, providerId), eq(ssoIdentities.subject, subject)));
  return link;
}

export const identitiesOfUserAt = (db: Executor, userId: string, providerId: string): Promise<IdentityRow[]> =>
  db
    .select()
    .from(ssoIdentities)
    .where(and(eq(ssoIdentities.userId, userId), eq(ssoIdentities.providerId, providerId)));

/** A sign-in through the link: its time and the address the IdP gave this time. */
export async function touchIdentity(db: Executor, id: string, email: string, now: Date): Promise<void> {
  await db.update(ssoIdentities).set({ lastLoginAt: now, email }).where(eq(ssoIdentities.id, id));
}

export async function insertIdentity(
  db: Executor,
  values: { providerId: string; userId: string; subject: string; email: string; lastLoginAt: Date },
): Promise<string> {
  const [row] = await db.insert(ssoIdentities).values(values).returning({ id: ssoIdentities.id });
  return row!.id;
}

// Accounts and memberships, as a federated sign-in sees them.

export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  const [u] = await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`).limit(1);
  return u;
}

/** Locks the account row and says whether it has a password (two unlinks at once see each other's result). */
export async function lockUserPasswordState(
  db: Executor,
  userId: string,
): Promise<{ hasPassword: boolean } | undefined> {
  const [u] = await db
    .select({ hasPassword: sql<boolean>`${users.passwordHash} is not null` })
    .from(users)
    .where(eq(users.id, userId))
    .for('update');
  return u;
}

export async function linkPreviewUser(db: Executor, userId: string) {
  const [u] = await db
    .select({
      email: users.email,
      mfaEnabled: users.mfaEnabled,
      hasPassword: sql<boolean>`${users.passwordHash} is not null`,
    })
    .from(users)
    .where(eq(users.id, userId));
  return u;
}

export async function activateUser(db: Executor, userId: string, now: Date): Promise<void> {
  await db.update(users).set({ status: 'active', updatedAt: now }).where(eq(users.id, userId));
}

export async function orgMemberRole(db: Executor, orgId: string, userId: string): Promise<string | undefined> {
  const [m] = await db
    .select({ roleId: organizationUsers.roleId })
    .from(organizationUsers)
    .where(
      and(
        eq(organizationUsers.orgId, orgId),
        eq(organizationUsers.userId, userId),
        eq(organizationUsers.status, 'active'),
      ),
    );
  return m?.roleId;
}

export async function partnerMemberRole(db: Executor, partnerId: string, userId: string): Promise<string | undefined> {
  const [m] = await db
    .select({ roleId: partnerUsers.roleId })
    .from(partnerUsers)
    .where(
      and(eq(partnerUsers.partnerId, partnerId), eq(partnerUsers.userId, userId), eq(partnerUsers.status, 'active')),
    );
  return m?.roleId;
}

/** Whether the account holds a membership of the provider's tenant that it has not accepted yet. */
export async function pendingMembershipAt(
  db: Executor,
  provider: Pick<ProviderRow, 'orgId' | 'partnerId'>,
  userId: string,
): Promise<boolean> {
  const res = provider.orgId
    ? await db.execute(
        sql`select 1 from organization_users where org_id = ${provider.orgId} and user_id = ${userId} and status = 'pending'`,
      )
    : await db.execute(
        sql`select 1 from partner_users where partner_id = ${provider.partnerId} and user_id = ${userId} and status = 'pending'`,
      );
  return rowsOf<unknown>(res).length > 0;
}

/** The provider's tenant's name (its organisation's, else its partner's). */
export async function providerTenantName(db: Executor, provider: Pick<ProviderRow, 'orgId' | 'partnerId'>) {
  const res = provider.orgId
    ? await db.execute(sql`select name from organizations where id = ${provider.orgId}`)
    : await db.execute(sql`select name from partners where id = ${provider.partnerId}`);
  return rowsOf<{ name: string }>(res)[0]?.name ?? 'your organization';
}

/** A membership outside the provider's tenant (the organisation; for a partner-owned provider, the partner and its organisations). */
export async function belongsElsewhere(
  db: Executor,
  provider: Pick<ProviderRow, 'orgId' | 'partnerId'>,
  userId: string,
): Promise<boolean> {
  const res = await db.execute(sql`
    select 1 from partner_users where user_id = ${userId} and (${provider.orgId}::uuid is not null or partner_id <> ${provider.partnerId})
    union all
    select 1 from organization_users where user_id = ${userId} and org_id is distinct from ${provider.orgId}::uuid
      and (${provider.orgId}::uuid is not null or org_id not in (select id from organizations where partner_id = ${provider.partnerId}))
    limit 1`);
  return rowsOf<unknown>(res).length > 0;
}

export async function orgExists(db: Executor, orgId: string): Promise<boolean> {
  const [org] = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, orgId));
  return Boolean(org);
}

/**
 * Auto-provisioning: a new active account, its membership in the provider's tenant with the default role, and its
 * link to the subject.
 */
export async function provisionAccount(
  db: Executor,
  provider: Pick<ProviderRow, 'id' | 'orgId' | 'partnerId'> & { defaultRoleId: string },
  who: { subject: string; email: string; name: string },
  now: Date,
): Promise<UserRow> {
  // Provisioning happens only for a domain the provider's tenant has proven: the address counts as verified.
  const [u] = await db
    .insert(users)
    .values({ email: who.email, name: who.name, status: 'active', emailVerified: true })
    .returning();
  if (provider.orgId)
    await db.insert(organizationUsers).values({ orgId: provider.orgId, userId: u!.id, roleId: provider.defaultRoleId });
  else
    await db
      .insert(partnerUsers)
      .values({ partnerId: provider.partnerId, userId: u!.id, roleId: provider.defaultRoleId, orgAccess: 'none' });
  await db
    .insert(ssoIdentities)
    .values({ providerId: provider.id, userId: u!.id, subject: who.subject, email: who.email, lastLoginAt: now });
  return u!;
}
