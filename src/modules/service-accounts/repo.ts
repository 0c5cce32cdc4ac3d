// Service accounts and their API keys: the SQL. The per-request key lookup is two named prepared statements.
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Executor, Tx } from '../../db/connect.js';
import { preparedStatement, uuidArg, type PreparedArg } from '../../db/prepared.js';
import { roles, serviceAccountKeys, serviceAccounts } from '../../db/schema/index.js';
import { ownedBy, type Target } from '../../db/tenant-filter.js';
import { ORG_POLICIES_SQL } from '../../access/repo.js';
import { RELATIONSHIPS_SQL, type RelationshipRow } from '../../access/relationships.js';
import { likePrefix } from '../../db/order.js';
import { rowsOf } from '../../db/rows.js';

export type AccountRow = typeof serviceAccounts.$inferSelect;
type NewAccount = typeof serviceAccounts.$inferInsert;
export type ApiKeyRow = typeof serviceAccountKeys.$inferSelect;
type NewApiKey = typeof serviceAccountKeys.$inferInsert;

// ---- Accounts

/** Keys neither revoked nor expired, counted in the query that reads the account. */
const activeKeyCount = (now: Date) =>
  sql<number>`(select count(*)::int from service_account_keys k where k.service_account_id = ${serviceAccounts.id} and k.revoked_at is null and (k.expires_at is null or k.expires_at > ${now}))`;

/** Role name and active key count of each account. */
export function accountExtras(db: Executor, ids: string[], now: Date) {
  return db
    .select({ id: serviceAccounts.id, roleName: roles.name, active: activeKeyCount(now) })
    .from(serviceAccounts)
    .innerJoin(roles, eq(roles.id, serviceAccounts.roleId))
    .where(
      sql`${serviceAccounts.id} in ${sql`(${sql.join(
        ids.map((i) => sql`${i}`),
        sql`, `,
      )})`}`,
    );
}

export async function insertAccount(tx: Tx, values: NewAccount): Promise<AccountRow> {
  const [row] = await tx.insert(serviceAccounts).values(values).returning();
  return row!;
}

/** One page (plus one row) of the accounts the target owns, newest first. */
export function listAccountRows(
  db: Executor,
  target: Target,
  q: { search?: string; after: { c: string; id: string } | null; limit: number },
) {
  const after = q.after;
  return db
    .select()
    .from(serviceAccounts)
    .where(
      and(
        eq(serviceAccounts.partnerId, target.partnerId),
        ownedBy(target, { partnerId: serviceAccounts.partnerId, orgId: serviceAccounts.orgId }),
        q.search ? sql`lower(${serviceAccounts.name}) like ${likePrefix(q.search.toLowerCase())}` : undefined,
        after
          ? sql`(${serviceAccounts.createdAt}, ${serviceAccounts.id}) < (${new Date(after.c)}, ${after.id})`
          : undefined,
      ),
    )
    .orderBy(desc(serviceAccounts.createdAt), desc(serviceAccounts.id))
    .limit(q.limit + 1);
}

export async function lockAccount(tx: Tx, id: string): Promise<void> {
  await tx.execute(sql`select id from service_accounts where id = ${id} for update`);
}

export async function updateAccountRow(tx: Tx, id: string, set: Partial<NewAccount>): Promise<AccountRow> {
  const [row] = await tx.update(serviceAccounts).set(set).where(eq(serviceAccounts.id, id)).returning();
  return row!;
}

/** Its keys go with it. */
export async function deleteAccountRow(tx: Tx, id: string): Promise<void> {
  await tx.delete(serviceAccounts).where(eq(serviceAccounts.id, id));
}

// ---- Keys

export async function countActiveKeys(tx: Tx, accountId: string, now: Date): Promise<number> {
  const [active] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(serviceAccountKeys)
    .where(
      and(
        eq(serviceAccountKeys.serviceAccountId, accountId),
        isNull(serviceAccountKeys.revokedAt),
        sql`(${serviceAccountKeys.expiresAt} is null or ${serviceAccountKeys.expiresAt} > ${now})`,
      ),
    );
  return Number(active?.n ?? 0);
}

export async function insertApiKey(tx: Tx, values: NewApiKey): Promise<ApiKeyRow> {
  const [row] = await tx.insert(serviceAccountKeys).values(values).returning();
  return row!;
}

/** One page (plus one row) of an account's keys, newest first. */
export function listApiKeyRows(
  db: Executor,
  accountId: string,
  q: { after: { c: string; id: string } | null; limit: number },
) {
  const after = q.after;
  return db
    .select()
    .from(serviceAccountKeys)
    .where(
      and(
        eq(serviceAccountKeys.serviceAccountId, accountId),
        after
          ? sql`(${serviceAccountKeys.createdAt}, ${serviceAccountKeys.id}) < (${new Date(after.c)}, ${after.id})`
          : undefined,
      ),
    )
    .orderBy(desc(serviceAccountKeys.createdAt), desc(serviceAccountKeys.id))
    .limit(q.limit + 1);
}

export async function apiKeyRowOf(db: Executor, accountId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db
    .select()
    .from(serviceAccountKeys)
    .where(and(eq(serviceAccountKeys.id, keyId), eq(serviceAccountKeys.serviceAccountId, accountId)))
    .limit(1);
  return row;
}

/** Revokes a live key; undefined when it was already revoked. */
export async function revokeApiKeyRow(tx: Tx, keyId: string, now: Date): Promise<ApiKeyRow | undefined> {
  const [row] = await tx
    .update(serviceAccountKeys)
    .set({ revokedAt: now })
    .where(and(eq(serviceAccountKeys.id, keyId), isNull(serviceAccountKeys.revokedAt)))
    .returning();
  return row;
}

// ---- A key presented on a request

export interface KeyAuthRow {
  key_id: string;
  key_hash: string;
  prefix: string;
  environment: string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  allowed_cidrs: string[] | string;
  last_used_at: Date | string | null;
  last_used_ip: string | null;
  ip_known: boolean;
  account_id: string;
  client_id: string;
  account_name: string;
  partner_id: string;
  org_id: string | null;
  role_id: string;
  disabled: boolean;
  partner_settings: unknown;
  org_settings: unknown;
  /** A partner's account, or an organisation's that someone acting for the partner made. */
  made_by_partner?: boolean;
  /** A partner's account: the partner's organisations that set policies on what speaks for the partner, id → settings. */
  org_policies?: Record<string, unknown> | string | null;
  /** A partner's own account of a partner requiring relationships: the partner's active relationships. */
  relationships?: RelationshipRow[] | string | null;
  epoch: number | string;
}

/** Literal-safe arguments for the PGlite EXECUTE form: a 12-hex-digit prefix, a normalised IP address. */
const prefixArg: PreparedArg<string> = {
  type: 'text',
  check: (v) => typeof v === 'string' && /^[0-9a-f]{12}$/.test(v),
  literal: (v) => `'${v}'`,
};
const ipArg: PreparedArg<string> = {
  type: 'text',
  check: (v) => typeof v === 'string' && /^[0-9a-fA-F:.]{1,45}$/.test(v),
  literal: (v) => `'${v}'`,
};

const SELECT = `select k.id as key_id, k.key_hash, k.prefix, k.environment, k.expires_at, k.revoked_at, k.allowed_cidrs,
          k.last_used_at, k.last_used_ip,
          exists (select 1 from service_account_key_ips i where i.key_id = k.id and i.ip = $2) as ip_known,
          a.id as account_id, a.client_id, a.name as account_name, a.partner_id, a.org_id, a.role_id, a.disabled,
          a.made_by_partner, p.settings as partner_settings, o.settings as org_settings,
          ${ORG_POLICIES_SQL("(case when a.org_id is null then 'partner' end)", 'a.partner_id')} as org_policies,
          ${RELATIONSHIPS_SQL("(case when a.org_id is null then 'partner' end)", 'a.partner_id', 'p.settings')} as relationships,
          (select epoch from authz_state where id = 1) as epoch
   from service_account_keys k
   join service_accounts a on a.id = k.service_account_id
   join partners p on p.id = a.partner_id
   left join organizations o on o.id = a.org_id`;

/** The key with this prefix, its account and what its principal is made of; whether `ip` used it before. */
export const keyByPrefix = preparedStatement<KeyAuthRow, [string, string]>(
  'gh_api_key_by_prefix',
  `${SELECT} where k.prefix = $1`,
  [prefixArg, ipArg],
);
/** The same, by key id and account id (an access token obtained with the key). */
export const keyById = preparedStatement<KeyAuthRow, [string, string, string]>(
  'gh_api_key_by_id',
  `${SELECT} where k.id = $1 and a.id = $3`,
  [uuidArg, ipArg, uuidArg],
);

/** Records an address the key is used from; false when it was known (the insert that adds it decides). */
export async function addKeyIp(tx: Tx, keyId: string, ip: string, now: Date): Promise<boolean> {
  const added = await tx.execute(
    sql`insert into service_account_key_ips (key_id, ip, first_seen_at) values (${keyId}, ${ip.slice(0, 45)}, ${now}) on conflict do nothing returning ip`,
  );
  return rowsOf<unknown>(added).length > 0;
}

/** Last used at and from where, unless another instance wrote it since `before`. */
export async function touchKey(db: Executor, keyId: string, ip: string, now: Date, before: Date): Promise<void> {
  await db.execute(
    sql`update service_account_keys set last_used_at = ${now}, last_used_ip = ${ip.slice(0, 45)} where id = ${keyId} and (last_used_at is null or last_used_at <= ${before})`,
  );
}
