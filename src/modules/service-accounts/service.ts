// Service accounts: machine identities of a partner or an organisation, each holding one role there.
// The role is assignable in that scope, within the creator's ceiling (the users module's check), and never `*:*`.
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import type { Executor, Tx } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import type { Deps } from '../../deps.js';
import { personIdOf, type Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { findRole, loadRoleChain } from '../roles/index.js';
import { auditTenant, findInScope, SERVICE_ACCOUNT } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { ORGANIZATION_WIDE } from '../../access/ceiling.js';
import { speaksForPartner } from '../../access/principal.js';
import { assertWithinReach } from '../../http/refusal.js';
import { assertTargetWithinCeiling } from '../users/index.js';
import {
  accountExtras,
  deleteAccountRow,
  insertAccount,
  listAccountRows,
  lockAccount,
  updateAccountRow,
  type AccountRow,
} from './repo.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** `sa_` + 24 base62 characters: public, unique, never confused with a key (`gh_`). */
const newClientId = () => `sa_${Array.from({ length: 24 }, () => BASE62[randomInt(62)]).join('')}`;

const fieldError = (field: string, msg: string) =>
  new AppError('validation_failed', msg, { details: { fieldErrors: { [field]: [msg] }, formErrors: [] } });

async function toJson(db: Executor, rows: AccountRow[], now: Date) {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const extra = await accountExtras(db, ids, now);
  const byId = new Map(extra.map((e) => [e.id, e]));
  return rows.map((r) => ({
    id: r.id,
    clientId: r.clientId,
    partnerId: r.partnerId,
    orgId: r.orgId,
    name: r.name,
    description: r.description,
    roleId: r.roleId,
    roleName: byId.get(r.id)?.roleName ?? '',
    disabled: r.disabled,
    activeKeyCount: Number(byId.get(r.id)?.active ?? 0),
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  }));
}

export async function accountJson(db: Executor, row: AccountRow, now: Date) {
  return (await toJson(db, [row], now))[0]!;
}

/**
 * A role a service account may hold in `target`: one of that scope's roles, never one whose effective permissions
 * include `*:*`, and within what the caller holds (403 permission_ceiling, the check users and roles use).
 */
async function assignableRole(tx: Tx, caller: Principal, target: Target, roleId: string) {
  const role = await findRole(tx, target, roleId).catch(() => {
    throw fieldError('roleId', 'Not a role of this scope');
  });
  if ((await loadRoleChain(tx, role.id))?.permissions.has('*:*'))
    throw fieldError('roleId', 'A service account never holds *:* (full administrative access)');
  await assertTargetWithinCeiling(tx, caller, role.id);
  return role;
}

/** A member restricted to sites or device groups cannot make an identity that sees the whole organisation. */
const assertOrgWide = (caller: Principal) => assertWithinReach(caller, ORGANIZATION_WIDE);

const targetOf = (row: AccountRow): Target =>
  row.orgId
    ? { kind: 'organization', partnerId: row.partnerId, orgId: row.orgId }
    : { kind: 'partner', partnerId: row.partnerId, orgId: null };

const nameTaken = (err: unknown) => isUniqueViolation(err, /service_accounts_(partner|org)_name_key/);

export async function createServiceAccount(
  deps: Deps,
  caller: Principal,
  target: Target,
  input: { name: string; roleId: string; description?: string },
  meta: AuditRequestMeta,
) {
  assertOrgWide(caller);
  const now = deps.clock.now();
  try {
    return await deps.db.transaction(async (tx) => {
      const role = await assignableRole(tx, caller, target, input.roleId);
      const row = await insertAccount(tx, {
        clientId: newClientId(),
        partnerId: target.partnerId,
        orgId: target.orgId,
        name: input.name,
        description: input.description ?? null,
        roleId: role.id,
        createdBy: personIdOf(caller),
        madeByPartner: target.orgId === null || speaksForPartner(caller),
        createdAt: now,
        updatedAt: now,
      });
      await deps.audit.record(
        tx,
        {
          action: 'service_account.create',
          actor: actorOf(caller),
          ...auditTenant(target),
          resourceType: 'service_account',
          resourceId: row.id,
          details: { name: input.name, roleId: role.id, clientId: row.clientId },
        },
        meta,
      );
      return accountJson(tx, row, now);
    });
  } catch (err) {
    if (nameTaken(err)) throw new AppError('name_taken', 'A service account with this name already exists here.');
    throw err;
  }
}

const listCursor = z.object({ c: z.string(), id: z.uuid() });

export async function listServiceAccounts(
  deps: Deps,
  target: Target,
  q: { limit: number; cursor?: string; search?: string },
) {
  const after = decodeCursor(q.cursor, listCursor);
  const rows = await listAccountRows(deps.db, target, { search: q.search, after, limit: q.limit });
  const page = pageOf(rows, q.limit, (r) => ({ c: r.createdAt.toISOString(), id: r.id }));
  return { data: await toJson(deps.db, page.data, deps.clock.now()), nextCursor: page.nextCursor };
}

/** The account, through the one by-id rule (404 outside the caller's scope). */
export async function findServiceAccount(db: Executor, p: Principal, id: string) {
  return (await findInScope(db, p, SERVICE_ACCOUNT, id)).row;
}

/** For a change: the account in scope, and within the caller's ceiling and site scope (as a member would be). */
export async function administrableAccount(tx: Tx, caller: Principal, id: string, lock = false) {
  const row = await findServiceAccount(tx, caller, id);
  if (lock) await lockAccount(tx, id);
  assertOrgWide(caller);
  await assertTargetWithinCeiling(tx, caller, row.roleId);
  return row;
}

export async function updateServiceAccount(
  deps: Deps,
  caller: Principal,
  id: string,
  patch: { name?: string; roleId?: string; description?: string | null; disabled?: boolean },
  meta: AuditRequestMeta,
) {
  const now = deps.clock.now();
  try {
    return await deps.db.transaction(async (tx) => {
      const current = await administrableAccount(tx, caller, id, true);
      const target = targetOf(current);
      if (patch.roleId !== undefined) await assignableRole(tx, caller, target, patch.roleId);
      const row = await updateAccountRow(tx, id, {
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.roleId !== undefined ? { roleId: patch.roleId } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.disabled !== undefined ? { disabled: patch.disabled } : {}),
        updatedAt: now,
      });
      await deps.audit.record(
        tx,
        {
          action: 'service_account.update',
          actor: actorOf(caller),
          ...auditTenant(target),
          resourceType: 'service_account',
          resourceId: id,
          details: {
            changed: Object.keys(patch).sort(),
            ...(patch.roleId ? { roleId: patch.roleId } : {}),
            ...(patch.disabled !== undefined ? { disabled: patch.disabled } : {}),
          },
        },
        meta,
      );
      return accountJson(tx, row, now);
    });
  } catch (err) {
    if (nameTaken(err)) throw new AppError('name_taken', 'A service account with this name already exists here.');
    throw err;
  }
}

/** Deletes the account and its keys: every key stops working on the next request. */
export async function deleteServiceAccount(deps: Deps, caller: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const current = await administrableAccount(tx, caller, id, true);
    await deleteAccountRow(tx, id);
    await deps.audit.record(
      tx,
      {
        action: 'service_account.delete',
        actor: actorOf(caller),
        ...auditTenant(targetOf(current)),
        resourceType: 'service_account',
        resourceId: id,
        details: { name: current.name, clientId: current.clientId },
      },
      meta,
    );
  });
}

/** Whether a PATCH body changes the role (the step-up condition of that route). */
export const changesRole = (body: unknown) => typeof (body as { roleId?: unknown } | undefined)?.roleId === 'string';

export { targetOf };
