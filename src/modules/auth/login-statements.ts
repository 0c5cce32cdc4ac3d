// The SQL of a password sign-in as named prepared statements (issue 15, P2): parsed and planned once per connection.
// Everything read before the password decides is one statement, run for every attempt (known email or not) so that
// its cost says nothing about the account; the session start is one statement inside the sign-in transaction.
import type { Db, Tx } from '../../db/connect.js';
import { boolArg, nullable, preparedStatement, textArg, timestampArg, uuidArg } from '../../db/prepared.js';
import { PARTNER_ADMIN_ROLE_ID } from '../roles/catalog.js';
import type { Membership } from './memberships.js';
import type { SessionContext } from './sessions.js';

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

export interface SessionRowInput {
  userId: string;
  tokenHash: string;
  ip: string | null;
  userAgent: string | null;
  context: SessionContext;
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
