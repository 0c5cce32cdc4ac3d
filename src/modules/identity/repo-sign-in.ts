// The sign-in start as named prepared statements, planned once per connection (part of repo.ts).
import type { Db, Tx } from '../../db/connect.js';
import { boolArg, nullable, preparedStatement, textArg, timestampArg, uuidArg } from '../../db/prepared.js';
import type { SessionScope } from './repo-sessions.js';

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
