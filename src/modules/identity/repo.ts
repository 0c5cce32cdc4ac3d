// The identity core's SQL: stored flows, sessions, memberships, known devices and the user lookups of a sign-in.
// The only file of the module that imports drizzle-orm or the schema.
import { and, desc, eq, gt, isNull, ne, or, type SQL, sql } from 'drizzle-orm';
import { PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';
import type { Db, Executor, Tx } from '../../db/connect.js';
import { boolArg, nullable, preparedStatement, textArg, timestampArg, uuidArg } from '../../db/prepared.js';
import {
  authFlows,
  knownDevices,
  organizationUsers,
  organizations,
  partnerUsers,
  sessions,
  ssoProviders,
  users,
} from '../../db/schema/index.js';
import { randomToken, sha256 } from '../../platform/crypto.js';

export type UserRow = typeof users.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
/** A further condition on the sessions a revocation ends (e.g. those of one tenant). */
export type SessionFilter = SQL;

// ---- Stored identity flows (STYLE 7): a token handed out once, stored as its SHA-256, consumed atomically.

export type FlowKind = (typeof authFlows.$inferSelect)['kind'];
export type Flow = typeof authFlows.$inferSelect;

export async function createFlow(
  tx: Executor,
  input: {
    kind: FlowKind;
    userId: string | null;
    data?: Record<string, unknown>;
    ttlMs: number;
    now: Date;
    token?: string;
  },
): Promise<{ token: string; flow: Flow }> {
  const token = input.token ?? randomToken();
  const [flow] = await tx
    .insert(authFlows)
    .values({
      kind: input.kind,
      userId: input.userId,
      tokenHash: sha256(token),
      data: input.data ?? {},
      expiresAt: new Date(input.now.getTime() + input.ttlMs),
    })
    .returning();
  return { token, flow: flow! };
}

/** Voids the user's live flows of a kind (one live reset link or invitation at a time). */
export async function voidFlows(tx: Executor, userId: string, kind: FlowKind, now: Date): Promise<void> {
  await tx
    .update(authFlows)
    .set({ consumedAt: now })
    .where(and(eq(authFlows.userId, userId), eq(authFlows.kind, kind), isNull(authFlows.consumedAt)));
}

/** A live flow for a token, without consuming it. */
export async function peekFlow(tx: Executor, kind: FlowKind, token: string, now: Date): Promise<Flow | null> {
  const [flow] = await tx
    .select()
    .from(authFlows)
    .where(
      and(
        eq(authFlows.tokenHash, sha256(token)),
        eq(authFlows.kind, kind),
        isNull(authFlows.consumedAt),
        gt(authFlows.expiresAt, now),
      ),
    )
    .limit(1);
  return flow ?? null;
}

/** Consumes a live flow; exactly one of any number of concurrent callers gets it. */
export async function consumeFlow(tx: Executor, kind: FlowKind, token: string, now: Date): Promise<Flow | null> {
  const [flow] = await tx
    .update(authFlows)
    .set({ consumedAt: now })
    .where(
      and(
        eq(authFlows.tokenHash, sha256(token)),
        eq(authFlows.kind, kind),
        isNull(authFlows.consumedAt),
        gt(authFlows.expiresAt, now),
      ),
    )
    .returning();
  return flow ?? null;
}

/** Counts a failed attempt against a flow; returns the new count (0 if the flow is gone). */
export async function countFlowAttempt(tx: Executor, flowId: string): Promise<number> {
  const [row] = await tx
    .update(authFlows)
    .set({ attempts: sql`${authFlows.attempts} + 1` })
    .where(eq(authFlows.id, flowId))
    .returning({ attempts: authFlows.attempts });
  return row?.attempts ?? 0;
}

// ---- Sessions (spec 2.6): one row per sign-in, holding the SHA-256 of the current refresh token.

export interface SessionScope {
  scope: 'partner' | 'organization' | null;
  partnerId: string | null;
  orgId: string | null;
  roleId: string | null;
}

export async function insertSession(
  tx: Executor,
  row: {
    userId: string;
    tokenHash: string;
    ip: string | null;
    userAgent: string | null;
    context: SessionScope;
    mfa: boolean;
    expiresAt: Date;
    absoluteExpiresAt: Date;
    now: Date;
    method: string | null;
    deviceId: string | null;
  },
): Promise<string> {
  const [inserted] = await tx
    .insert(sessions)
    .values({
      userId: row.userId,
      tokenHash: row.tokenHash,
      ipAddress: row.ip,
      userAgent: row.userAgent,
      scope: row.context.scope,
      partnerId: row.context.scope === 'partner' ? row.context.partnerId : null,
      orgId: row.context.scope === 'organization' ? row.context.orgId : null,
      mfa: row.mfa,
      expiresAt: row.expiresAt,
      absoluteExpiresAt: row.absoluteExpiresAt,
      lastUsedAt: row.now,
      authTime: row.now,
      method: row.method,
      deviceId: row.deviceId,
    })
    .returning({ id: sessions.id });
  return inserted!.id;
}

/** Ends every live session of a user, optionally but one, or only those `only` selects; returns how many. */
export async function revokeSessionsOf(
  tx: Executor,
  userId: string,
  reason: string,
  now: Date,
  exceptSessionId?: string,
  only?: SessionFilter,
): Promise<number> {
  const rows = await tx
    .update(sessions)
    .set({ revokedAt: now, revokeReason: reason })
    .where(
      and(
        eq(sessions.userId, userId),
        isNull(sessions.revokedAt),
        exceptSessionId ? ne(sessions.id, exceptSessionId) : undefined,
        only,
      ),
    )
    .returning({ id: sessions.id });
  return rows.length;
}

/** A session's new refresh token (its hash), and whether it carries MFA; renews auth_time. */
export async function replaceSessionToken(
  tx: Executor,
  sessionId: string,
  tokenHash: string,
  now: Date,
  mfa?: boolean,
): Promise<void> {
  await tx
    .update(sessions)
    .set({ tokenHash, ...(mfa === undefined ? {} : { mfa }), lastUsedAt: now, authTime: now })
    .where(eq(sessions.id, sessionId));
}

export async function sessionExpiry(db: Executor, sessionId: string): Promise<Date | undefined> {
  const [row] = await db
    .select({ expiresAt: sessions.expiresAt })
    .from(sessions)
    .where(eq(sessions.id, sessionId))
    .limit(1);
  return row?.expiresAt;
}

export async function findSession(db: Executor, sessionId: string): Promise<SessionRow | undefined> {
  const [row] = await db.select().from(sessions).where(eq(sessions.id, sessionId));
  return row;
}

// ---- Users

export const findUserByEmail = async (db: Executor, email: string): Promise<UserRow | null> =>
  (await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`).limit(1))[0] ?? null;

export async function findUser(db: Executor, userId: string): Promise<UserRow | undefined> {
  const [user] = await db.select().from(users).where(eq(users.id, userId)).limit(1);
  return user;
}

/** Holds the user's row until the transaction ends: one credential or device change of an account at a time. */
export async function lockUser(tx: Executor, userId: string): Promise<void> {
  await tx.execute(sql`select id from users where id = ${userId} for update`);
}

// ---- Memberships: which one a sign-in lands in, and whether SSO is enforced on any of them.

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
 * never enforces, and the partner's administrators (Partner Admin) keep password sign-in: break-glass (issue 13).
 */
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
      ),
    )
    .limit(1);
  return rows.length > 0;
}

// ---- Known devices (issue 19)

/** A known device of the user seen now; its id, or null when the device is not known. */
export async function touchKnownDevice(tx: Executor, userId: string, tokenHash: string, now: Date) {
  const [known] = await tx
    .update(knownDevices)
    .set({ lastSeenAt: now })
    .where(and(eq(knownDevices.userId, userId), eq(knownDevices.tokenHash, tokenHash)))
    .returning({ id: knownDevices.id });
  return known?.id ?? null;
}

export async function hasKnownDevice(tx: Executor, userId: string): Promise<boolean> {
  const [other] = await tx
    .select({ id: knownDevices.id })
    .from(knownDevices)
    .where(eq(knownDevices.userId, userId))
    .limit(1);
  return Boolean(other);
}

export async function insertKnownDevice(tx: Executor, userId: string, tokenHash: string, now: Date): Promise<string> {
  const [device] = await tx
    .insert(knownDevices)
    .values({ userId, tokenHash, createdAt: now, lastSeenAt: now })
    .returning({ id: knownDevices.id });
  return device!.id;
}

export async function bindSessionDevice(tx: Executor, sessionId: string, deviceId: string): Promise<void> {
  await tx.update(sessions).set({ deviceId }).where(eq(sessions.id, sessionId));
}

// ---- The sign-in start as named prepared statements (issue 15, P2): parsed and planned once per connection.

export interface SessionRowInput {
  userId: string;
  tokenHash: string;
  ip: string | null;
  userAgent: string | null;
  context: SessionScope;
  mfa: boolean;
  expiresAt: Date;
  absoluteExpiresAt: Date;
  now: Date;
  method: string | null;
}

const startStatement = preparedStatement<
  { id: string },
  [
    string,
    string,
    string | null,
    string | null,
    string | null,
    string | null,
    string | null,
    boolean,
    Date,
    Date,
    Date,
    string | null,
  ]
>(
  'gh_login_start',
  `with s as (
     insert into sessions (user_id, token_hash, ip_address, user_agent, scope, partner_id, org_id, mfa, expires_at,
                           absolute_expires_at, last_used_at, auth_time, method)
     values ($1::uuid, $2::text, $3::text, $4::text, $5::text::membership_kind, case when $5::text = 'partner' then $6::uuid end,
             case when $5::text = 'organization' then $7::uuid end, $8::boolean, $9::timestamptz, $10::timestamptz,
             $11::timestamptz, $11::timestamptz, $12::text)
     returning id),
   pu as (update partner_users set last_used_at = $11::timestamptz
          where $5::text = 'partner' and user_id = $1::uuid and partner_id = $6::uuid),
   ou as (update organization_users set last_used_at = $11::timestamptz
          where $5::text = 'organization' and user_id = $1::uuid and org_id = $7::uuid),
   u as (update users set last_login_at = $11::timestamptz, failed_login_count = 0, locked_until = null where id = $1::uuid)
   select id from s`,
  [
    uuidArg,
    textArg,
    nullable(textArg),
    nullable(textArg),
    nullable(textArg),
    nullable(uuidArg),
    nullable(uuidArg),
    boolArg,
    timestampArg,
    timestampArg,
    timestampArg,
    nullable(textArg),
  ],
);

/**
 * Inside the sign-in transaction, one statement: the session row, the membership marked used and the user's last
 * sign-in (failed count and lock cleared). Returns the new session's id.
 */
export async function insertSignIn(db: Db, tx: Tx, s: SessionRowInput): Promise<string> {
  const c = s.context;
  const rows = await startStatement.inTransaction(
    db,
    tx,
    s.userId,
    s.tokenHash,
    s.ip,
    s.userAgent,
    c.scope,
    c.partnerId,
    c.orgId,
    s.mfa,
    s.expiresAt,
    s.absoluteExpiresAt,
    s.now,
    s.method,
  );
  const id = rows?.[0]?.id;
  if (!id) throw new Error('the session row was not written');
  return id;
}

const knownDeviceStatement = preparedStatement<{ id: string }, [string, string, string, Date]>(
  'gh_login_known_device',
  `with d as (update known_devices set last_seen_at = $4::timestamptz where user_id = $1::uuid and token_hash = $2::text returning id)
   update sessions set device_id = d.id from d where sessions.id = $3::uuid returning d.id`,
  [uuidArg, textArg, uuidArg, timestampArg],
);

/** A returning browser: its device seen now and bound to the session, in one statement; false when it is not known. */
export async function bindKnownDevice(
  db: Db,
  userId: string,
  tokenHash: string,
  sessionId: string,
  now: Date,
): Promise<boolean> {
  return ((await knownDeviceStatement(db, userId, tokenHash, sessionId, now)) ?? []).length > 0;
}

/** A new password hash: failed sign-ins and lock cleared, the credential version moved on (pending flows void). */
export async function storePasswordHash(tx: Executor, userId: string, passwordHash: string, now: Date): Promise<void> {
  await tx
    .update(users)
    .set({
      passwordHash,
      passwordChangedAt: now,
      failedLoginCount: 0,
      lockedUntil: null,
      credentialVersion: sql`${users.credentialVersion} + 1`,
      updatedAt: now,
    })
    .where(eq(users.id, userId));
}
