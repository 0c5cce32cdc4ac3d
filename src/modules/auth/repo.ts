// The auth module's SQL: the only auth file that imports drizzle-orm or the schema. Tenant conditions come from
// src/db/tenant-scope.ts.
import { and, desc, eq, gt, inArray, isNull, ne, sql } from 'drizzle-orm';
import { PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';
import type { Db, Executor } from '../../db/connect.js';
import { nullable, preparedStatement, textArg } from '../../db/prepared.js';
import {
  organizations,
  partnerUsers,
  partners,
  passkeys,
  roles,
  sessionRotatedTokens,
  sessions,
  signingKeys,
  users,
} from '../../db/schema/index.js';
import { ownedBy, type Target } from '../../db/tenant-scope.js';
import type { Membership, SessionContext, SessionRow } from '../identity/index.js';

// ---- Password sign-in: everything read before the password decides, as one named prepared statement (issue 15,
// P2), run for every attempt (known email or not) so that its cost says nothing about the account.

/** Stands in for a user id when there is no user, so an unknown email costs the same as a known one. */
export const NO_USER = '00000000-0000-0000-0000-000000000000';

/** What sign-in needs of a user: never the TOTP secret or recovery codes. */
export interface LoginUser {
  id: string;
  email: string;
  passwordHash: string | null;
  status: 'active' | 'invited' | 'disabled';
  mfaEnabled: boolean;
  mfaMethod: 'totp' | 'sms' | 'passkey' | null;
  phoneNumber: string | null;
  credentialVersion: number;
}

/** A membership with its tenant's settings (the sign-in IP allow-list is read from them, no second read). */
export interface LoginMembership extends Membership {
  settings: unknown;
}

export interface LoginFacts {
  user: LoginUser | null;
  /** Any membership under an active provider that enforces SSO (ssoEnforcedFor, same rule). */
  ssoEnforced: boolean;
  /** The user signed in from this address before (any session, ended or not). */
  knownAddress: boolean;
  memberships: LoginMembership[];
}

interface FactsRow {
  id: string | null;
  email: string | null;
  password_hash: string | null;
  status: LoginUser['status'] | null;
  mfa_enabled: boolean | null;
  mfa_method: LoginUser['mfaMethod'];
  phone_number: string | null;
  credential_version: number | null;
  sso_enforced: boolean;
  known_address: boolean;
  memberships: unknown;
}

const factsStatement = preparedStatement<FactsRow, [string, string | null]>(
  'gh_login_facts',
  `with u as (select id, email, password_hash, status, mfa_enabled, mfa_method, phone_number, credential_version
              from users where lower(email) = lower($1::text) limit 1),
        k as (select coalesce((select id from u), '${NO_USER}'::uuid) as id)
   select u.id, u.email, u.password_hash, u.status, u.mfa_enabled, u.mfa_method, u.phone_number, u.credential_version,
     exists (select 1 from sso_providers sp
             where sp.status = 'active' and sp.enforce_sso
               and (sp.org_id in (select org_id from organization_users where user_id = k.id)
                    or (sp.org_id is null and sp.partner_id in (select partner_id from partner_users where user_id = k.id)))
               and not exists (select 1 from partner_users pa where pa.user_id = k.id and pa.partner_id = sp.partner_id
                               and pa.role_id = '${PARTNER_ADMIN_ROLE_ID}'::uuid)) as sso_enforced,
     exists (select 1 from sessions s where s.user_id = k.id and s.ip_address = $2::text) as known_address,
     (select coalesce(json_agg(m), '[]'::json) from (
        select 'partner' as scope, pu.partner_id as "partnerId", null::uuid as "orgId", pu.role_id as "roleId",
               pu.last_used_at as "lastUsedAt", p.settings
        from partner_users pu join partners p on p.id = pu.partner_id where pu.user_id = k.id
        union all
        select 'organization', o.partner_id, ou.org_id, ou.role_id, ou.last_used_at, o.settings
        from organization_users ou join organizations o on o.id = ou.org_id where ou.user_id = k.id) m) as memberships
   from k left join u on true`,
  [textArg, nullable(textArg)],
);

const parseJson = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

/** One statement: the user by e-mail and every fact the sign-in decides on. */
export async function loginFacts(db: Db, email: string, ip: string | null): Promise<LoginFacts> {
  const row = (await factsStatement(db, email.slice(0, 1024), ip))?.[0];
  const raw = (parseJson(row?.memberships) ?? []) as (Omit<LoginMembership, 'lastUsedAt'> & {
    lastUsedAt: string | null;
  })[];
  const memberships = raw.map((m) => ({ ...m, lastUsedAt: m.lastUsedAt ? new Date(m.lastUsedAt) : null }));
  const user: LoginUser | null = row?.id
    ? {
        id: row.id,
        email: row.email!,
        passwordHash: row.password_hash,
        status: row.status!,
        mfaEnabled: Boolean(row.mfa_enabled),
        mfaMethod: row.mfa_method,
        phoneNumber: row.phone_number,
        credentialVersion: Number(row.credential_version ?? 0),
      }
    : null;
  return { user, ssoEnforced: Boolean(row?.sso_enforced), knownAddress: Boolean(row?.known_address), memberships };
}

/** Whether the user has any passkey (the second step offers it). */
export async function hasPasskey(db: Executor, userId: string): Promise<boolean> {
  return (await db.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, userId)).limit(1)).length > 0;
}

export async function passkeyCount(tx: Executor, userId: string): Promise<number> {
  return (await tx.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, userId))).length;
}

// ---- Sessions of the caller

/** The caller's session continues under a new refresh token; renews auth_time (a fresh proof was made). */
export async function renewSessionToken(tx: Executor, sessionId: string, tokenHash: string, now: Date): Promise<void> {
  await tx.update(sessions).set({ tokenHash, lastUsedAt: now, authTime: now }).where(eq(sessions.id, sessionId));
}

/** Renews auth_time of a live session; false when the session has ended. */
export async function renewAuthTime(tx: Executor, sessionId: string, now: Date, liveOnly = true): Promise<boolean> {
  const renewed = await tx
    .update(sessions)
    .set({ authTime: now })
    .where(and(eq(sessions.id, sessionId), liveOnly ? isNull(sessions.revokedAt) : undefined))
    .returning({ id: sessions.id });
  return renewed.length > 0;
}

export async function sessionMethod(db: Executor, sessionId: string): Promise<string | null | undefined> {
  const [current] = await db.select({ method: sessions.method }).from(sessions).where(eq(sessions.id, sessionId));
  return current?.method;
}

/** Moves a session to another membership under a new refresh token. */
export async function moveSession(
  tx: Executor,
  sessionId: string,
  ctx: SessionContext,
  tokenHash: string,
  now: Date,
  method?: string,
): Promise<void> {
  await tx
    .update(sessions)
    .set({
      scope: ctx.scope,
      partnerId: ctx.scope === 'partner' ? ctx.partnerId : null,
      orgId: ctx.orgId,
      tokenHash,
      lastUsedAt: now,
      ...(method ? { method } : {}),
    })
    .where(eq(sessions.id, sessionId));
}

/** Ends one live session of a user; true when it was live. */
export async function endUserSession(
  tx: Executor,
  userId: string,
  sessionId: string,
  reason: string,
  now: Date,
): Promise<boolean> {
  const ended = await tx
    .update(sessions)
    .set({ revokedAt: now, revokeReason: reason })
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id });
  return ended.length === 1;
}

// ---- Session lists (issue 19): live sessions of a user, all or those a target tenant holds.

const live = (now: Date) =>
  and(isNull(sessions.revokedAt), gt(sessions.expiresAt, now), gt(sessions.absoluteExpiresAt, now));

/** Sessions held in a target tenant: the partner's own (partner scope) or the organisation's. */
const inTarget = (target: Target) => ownedBy(target, { partnerId: sessions.partnerId, orgId: sessions.orgId });

export async function liveSessions(db: Executor, userId: string, now: Date, target?: Target): Promise<SessionRow[]> {
  return db
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, userId), live(now), target ? inTarget(target) : undefined))
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    .limit(200);
}

/**
 * Ends live sessions of a user: one (`sessionId`), or all but one (`exceptSessionId`), within a target tenant when
 * given. Returns the ids ended.
 */
export async function endLiveSessions(
  tx: Executor,
  q: { userId: string; sessionId?: string; exceptSessionId?: string; target?: Target },
  reason: string,
  now: Date,
): Promise<string[]> {
  const rows = await tx
    .update(sessions)
    .set({ revokedAt: now, revokeReason: reason })
    .where(
      and(
        eq(sessions.userId, q.userId),
        q.sessionId ? eq(sessions.id, q.sessionId) : undefined,
        q.exceptSessionId ? ne(sessions.id, q.exceptSessionId) : undefined,
        q.target ? inTarget(q.target) : undefined,
        live(now),
      ),
    )
    .returning({ id: sessions.id });
  return rows.map((r) => r.id);
}

// ---- Refresh-token rotation with reuse detection

export async function findLiveSessionByToken(tx: Executor, tokenHash: string, now: Date) {
  const [current] = await tx
    .select({ id: sessions.id, absoluteExpiresAt: sessions.absoluteExpiresAt })
    .from(sessions)
    .where(
      and(
        eq(sessions.tokenHash, tokenHash),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, now),
        gt(sessions.absoluteExpiresAt, now),
      ),
    )
    .limit(1);
  return current ?? null;
}

/** Swaps the session's refresh token if it still holds `oldHash` (of two concurrent refreshes exactly one wins). */
export async function rotateSessionToken(
  tx: Executor,
  sessionId: string,
  oldHash: string,
  newHash: string,
  now: Date,
  expiresAt: Date,
): Promise<SessionRow | null> {
  const [session] = await tx
    .update(sessions)
    .set({ tokenHash: newHash, lastUsedAt: now, expiresAt })
    .where(and(eq(sessions.id, sessionId), eq(sessions.tokenHash, oldHash), isNull(sessions.revokedAt)))
    .returning();
  return session ?? null;
}

export async function recordRotatedToken(
  tx: Executor,
  row: { tokenHash: string; sessionId: string; rotatedAt: Date; rotatedBy: string },
): Promise<void> {
  await tx.insert(sessionRotatedTokens).values(row);
}

export async function findRotatedToken(tx: Executor, tokenHash: string) {
  const [reused] = await tx
    .select()
    .from(sessionRotatedTokens)
    .where(eq(sessionRotatedTokens.tokenHash, tokenHash))
    .limit(1);
  return reused ?? null;
}

export async function setRotatedAt(db: Executor, tokenHash: string, at: Date): Promise<void> {
  await db.update(sessionRotatedTokens).set({ rotatedAt: at }).where(eq(sessionRotatedTokens.tokenHash, tokenHash));
}

/** Ends a session if it is live; the row, or null when it had ended already. */
export async function revokeSession(tx: Executor, sessionId: string, reason: string, now: Date) {
  const [victim] = await tx
    .update(sessions)
    .set({ revokedAt: now, revokeReason: reason })
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)))
    .returning();
  return victim ?? null;
}

export async function partnerOfOrg(tx: Executor, orgId: string): Promise<string | null> {
  const [org] = await tx
    .select({ partnerId: organizations.partnerId })
    .from(organizations)
    .where(eq(organizations.id, orgId));
  return org?.partnerId ?? null;
}

// ---- Users: invitations, registration, password removal

export async function tenantNames(db: Executor, ctx: SessionContext) {
  const [p] = ctx.partnerId
    ? await db.select({ name: partners.name }).from(partners).where(eq(partners.id, ctx.partnerId))
    : [];
  const [o] = ctx.orgId
    ? await db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, ctx.orgId))
    : [];
  return { partnerName: p?.name, orgName: o?.name };
}

/** An invited user becomes active with a password; null when the user is no longer invited. */
export async function activateInvitedUser(
  tx: Executor,
  userId: string,
  input: { passwordHash: string; name: string; now: Date },
) {
  const [activated] = await tx
    .update(users)
    .set({
      status: 'active',
      passwordHash: input.passwordHash,
      passwordChangedAt: input.now,
      name: input.name,
      updatedAt: input.now,
    })
    .where(and(eq(users.id, userId), eq(users.status, 'invited')))
    .returning();
  return activated ?? null;
}

export async function removePasswordHash(tx: Executor, userId: string, now: Date): Promise<void> {
  await tx
    .update(users)
    .set({
      passwordHash: null,
      passwordChangedAt: now,
      credentialVersion: sql`${users.credentialVersion} + 1`,
      updatedAt: now,
    })
    .where(eq(users.id, userId));
}

export async function emailTaken(tx: Executor, email: string): Promise<boolean> {
  const existing = await tx
    .select({ id: users.id })
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email})`)
    .limit(1);
  return existing.length > 0;
}

export async function insertActiveUser(
  tx: Executor,
  input: { email: string; name: string; passwordHash: string },
  now: Date,
) {
  const [user] = await tx
    .insert(users)
    .values({
      email: input.email,
      name: input.name,
      passwordHash: input.passwordHash,
      status: 'active',
      passwordChangedAt: now,
    })
    .returning();
  return user!;
}

export async function partnerSlugTaken(tx: Executor, slug: string): Promise<boolean> {
  return (await tx.select({ id: partners.id }).from(partners).where(eq(partners.slug, slug)).limit(1)).length > 0;
}

export async function insertPartner(tx: Executor, name: string, slug: string) {
  const [partner] = await tx
    .insert(partners)
    .values({ name, slug })
    .returning({ id: partners.id, name: partners.name, slug: partners.slug });
  return partner!;
}

/** The partner's first administrator: Partner Admin over every organisation. */
export async function insertPartnerAdmin(tx: Executor, partnerId: string, userId: string, now: Date): Promise<void> {
  await tx.insert(partnerUsers).values({
    partnerId,
    userId,
    roleId: PARTNER_ADMIN_ROLE_ID,
    orgAccess: 'all',
    lastUsedAt: now,
  });
}

// ---- Names of the caller's memberships (POST /auth/switch-context)

const NAMED = { partners, organizations, roles } as const;

export const namesOf = async (db: Executor, kind: keyof typeof NAMED, ids: string[]) => {
  const table = NAMED[kind];
  return new Map(
    ids.length
      ? (await db.select({ id: table.id, name: table.name }).from(table).where(inArray(table.id, ids))).map((r) => [
          r.id,
          r.name,
        ])
      : [],
  );
};

// ---- Ed25519 signing keys

export type SigningKeyRow = typeof signingKeys.$inferSelect;

/** Serialises key creation and rotation across instances (inside the caller's transaction). */
export async function lockSigningKeys(tx: Executor): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(7242002)`);
}

export async function hasActiveSigningKey(tx: Executor): Promise<boolean> {
  return (await tx.select().from(signingKeys).where(eq(signingKeys.active, true)).limit(1)).length > 0;
}

export async function insertSigningKey(
  tx: Executor,
  row: { kid: string; publicJwk: unknown; privateJwkEnc: string },
): Promise<void> {
  await tx.insert(signingKeys).values(row);
}

/** Retires the active key; its kid, or null when there was none. */
export async function retireActiveSigningKey(tx: Executor, now: Date): Promise<string | null> {
  const [old] = await tx
    .update(signingKeys)
    .set({ active: false, retiredAt: now })
    .where(eq(signingKeys.active, true))
    .returning({ kid: signingKeys.kid });
  return old?.kid ?? null;
}

export async function listSigningKeys(db: Db): Promise<SigningKeyRow[]> {
  return db.select().from(signingKeys).orderBy(desc(signingKeys.createdAt));
}
