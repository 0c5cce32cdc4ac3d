// Password sign-in: the facts read before the password decides, and passkey presence (part of repo.ts).
import { eq } from 'drizzle-orm';
import { provenForTenantSql } from '../../db/domain-proof.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';
import type { Db, Executor } from '../../db/connect.js';
import { nullable, preparedStatement, textArg } from '../../db/prepared.js';
import { passkeys } from '../../db/schema/index.js';
import type { Membership } from '../identity/index.js';

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
                               and pa.role_id = '${PARTNER_ADMIN_ROLE_ID}'::uuid)
               and ${provenForTenantSql('u.email', 'sp.partner_id', 'sp.org_id')}) as sso_enforced,
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
