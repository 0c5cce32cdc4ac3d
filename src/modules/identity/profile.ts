// The profile of the signed-in user: the token response's user, GET /auth/me and GET /users/me.
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { notFound } from '../../http/errors.js';
import { findUser, type UserRow } from './repo.js';
import type { UserProfile } from './schemas.js';

/** A role's permissions in name order, sorted once per resolved set (the role cache hands out the same set). */
const sorted = new WeakMap<ReadonlySet<string>, readonly string[]>();
function sortedPermissions(set: ReadonlySet<string>): string[] {
  let list = sorted.get(set);
  if (!list) {
    list = Object.freeze([...set].sort());
    sorted.set(set, list);
  }
  return list as string[];
}

/** The profile of the user behind a principal, with the permissions of the membership the session acts in. */
export function toProfile(
  user: UserRow,
  ctx: Pick<Principal, 'tenantKind' | 'partnerId' | 'orgId' | 'roleId' | 'permissions'>,
): UserProfile {
  return {
    id: user.id,
    email: user.email,
    emailVerified: user.emailVerified,
    name: user.name,
    avatarUrl: user.avatarUrl,
    status: user.status,
    mfaEnabled: user.mfaEnabled,
    mfaMethod: user.mfaMethod,
    phoneVerified: user.phoneVerified,
    phoneLast4: user.phoneNumber ? user.phoneNumber.slice(-4) : null,
    lastLoginAt: user.lastLoginAt?.toISOString() ?? null,
    createdAt: user.createdAt.toISOString(),
    scope: ctx.tenantKind,
    partnerId: ctx.partnerId,
    orgId: ctx.orgId,
    roleId: ctx.roleId,
    permissions: sortedPermissions(ctx.permissions),
  };
}

/** GET /users/me and /auth/me: answered from the row the session check read for this request (one statement). */
export async function currentProfile(db: Executor, principal: Principal): Promise<UserProfile> {
  const u = principal.user;
  if (!u) return loadProfile(db, principal);
  return {
    id: principal.userId,
    email: principal.email,
    emailVerified: u.emailVerified,
    name: u.name,
    avatarUrl: u.avatarUrl,
    status: u.status,
    mfaEnabled: principal.mfaEnabled,
    mfaMethod: u.mfaMethod,
    phoneVerified: u.phoneVerified,
    phoneLast4: u.phoneLast4,
    lastLoginAt: u.lastLoginAt?.toISOString() ?? null,
    createdAt: u.createdAt.toISOString(),
    scope: principal.tenantKind,
    partnerId: principal.partnerId,
    orgId: principal.orgId,
    roleId: principal.roleId,
    permissions: sortedPermissions(principal.permissions),
  };
}

export async function loadProfile(db: Executor, principal: Principal): Promise<UserProfile> {
  const user = await findUser(db, principal.userId);
  if (!user) throw notFound('user');
  return toProfile(user, principal);
}
