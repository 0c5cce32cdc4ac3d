// Password sign-in: the facts read before the password decides, and passkey presence (part of repo.ts).
import { eq } from 'drizzle-orm';
import type { Db, Executor } from '../../db/connect.js';
import { nullable, preparedStatement, textArg } from '../../db/prepared.js';
import { passkeys } from '../../db/schema/index.js';
import { type Membership, ORG_SSO_ONLY, PARTNER_SSO_ONLY, ssoOnlyEverywhere } from '../identity/index.js';

// ---- Password sign-in: everything read before the password decides, as one named prepared statement, run for every attempt (known email or not) so that its cost says nothing about the account.

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
  /** Every membership needs SSO (ssoOnlyEverywhere): a password signs in to none of them. */
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
  known_address: boolean;
  memberships: unknown;
}

const factsStatement = preparedStatement<FactsRow, [string, string | null]>(
  'gh_login_facts',
  `with u as (select id, email, password_hash, status, mfa_enabled, mfa_method, phone_number, credential_version
              from users where lower(email) = lower($1::text) limit 1),
        k as (select coalesce((select id from u), '${NO_USER}'::uuid) as id)
   select u.id, u.email, u.password_hash, u.status, u.mfa_enabled, u.mfa_method, u.phone_number, u.credential_version,
     exists (select 1 from sessions s where s.user_id = k.id and s.ip_address = $2::text) as known_address,
     (select coalesce(json_agg(ms), '[]'::json) from (
        select 'partner' as scope, m.partner_id as "partnerId", null::uuid as "orgId", m.role_id as "roleId",
               m.last_used_at as "lastUsedAt", p.settings, ${PARTNER_SSO_ONLY} as "ssoOnly"
        from partner_users m join partners p on p.id = m.partner_id where m.user_id = k.id and m.status = 'active'
        union all
        select 'organization', o.partner_id, m.org_id, m.role_id, m.last_used_at, o.settings, ${ORG_SSO_ONLY}
        from organization_users m join organizations o on o.id = m.org_id where m.user_id = k.id and m.status = 'active') ms) as memberships
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
  return { user, ssoEnforced: ssoOnlyEverywhere(memberships), knownAddress: Boolean(row?.known_address), memberships };
}

/** Whether the user has any passkey (the second step offers it). */
export async function hasPasskey(db: Executor, userId: string): Promise<boolean> {
  return (await db.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, userId)).limit(1)).length > 0;
}

export async function passkeyCount(tx: Executor, userId: string): Promise<number> {
  return (await tx.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, userId))).length;
}
