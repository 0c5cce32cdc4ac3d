// SCIM bearer tokens: issued once (`ghscim_` + 256-bit secret, only its SHA-256 kept), listed, revoked.
import { z } from 'zod';
import { randomToken, sha256 } from '../../platform/crypto.js';
import type { Executor } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import { personIdOf, type Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { findRole } from '../roles/index.js';
import { auditTenant, findInScope, SCIM_TOKEN } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { ORGANIZATION_WIDE } from '../../access/ceiling.js';
import { speaksForPartner } from '../../access/principal.js';
import { assertWithinReach } from '../../http/refusal.js';
import { assertScimAssignable } from './ceiling.js';
import { insertScimToken, listScimTokenRows, revokeScimTokenRow, roleNames, type ScimTokenRow } from './repo.js';

type TokenRow = ScimTokenRow;

/** The prefix makes a leaked token greppable (secret scanning); the rest is 256 bits of randomness. */
export const SCIM_TOKEN_PREFIX = 'ghscim_';
export const SCIM_TOKEN_SHAPE = /^ghscim_[A-Za-z0-9_-]{43}$/;

const fieldError = (field: string, msg: string) =>
  new AppError('validation_failed', msg, { details: { fieldErrors: { [field]: [msg] }, formErrors: [] } });

async function toJson(db: Executor, rows: TokenRow[]) {
  if (rows.length === 0) return [];
  const names = new Map(
    (await roleNames(db, [...new Set(rows.map((r) => r.defaultRoleId))])).map((r) => [r.id, r.name]),
  );
  return rows.map((r) => ({
    id: r.id,
    partnerId: r.partnerId,
    orgId: r.orgId,
    name: r.name,
    hint: r.hint,
    defaultRoleId: r.defaultRoleId,
    defaultRoleName: names.get(r.defaultRoleId) ?? '',
    sendInvitations: r.sendInvitations,
    createdAt: r.createdAt.toISOString(),
    lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
    revokedAt: r.revokedAt?.toISOString() ?? null,
  }));
}

export async function createScimToken(
  deps: Deps,
  caller: Principal,
  target: Target,
  input: { name: string; defaultRoleId: string; sendInvitations?: boolean },
  meta: AuditRequestMeta,
) {
  const token = `${SCIM_TOKEN_PREFIX}${randomToken(32)}`;
  const now = deps.clock.now();
  const row = await deps.db.transaction(async (tx) => {
    const role = await findRole(tx, target, input.defaultRoleId).catch(() => {
      throw fieldError('defaultRoleId', 'Not a role of this scope');
    });
    // A token provisions organisation-wide members: a site-restricted member cannot make one.
    await assertScimAssignable(tx, caller, role.id);
    const created = await insertScimToken(tx, {
      partnerId: target.partnerId,
      orgId: target.orgId,
      name: input.name,
      tokenHash: sha256(token),
      hint: token.slice(0, 12),
      defaultRoleId: role.id,
      sendInvitations: input.sendInvitations ?? true,
      createdBy: personIdOf(caller),
      madeByPartner: target.orgId === null || speaksForPartner(caller),
      createdAt: now,
    });
    await deps.audit.record(
      tx,
      {
        action: 'scim_token.create',
        actor: actorOf(caller),
        ...auditTenant(target),
        resourceType: 'scim_token',
        resourceId: created.id,
        details: { name: input.name, defaultRoleId: role.id },
      },
      meta,
    );
    return created;
  });
  return { ...(await toJson(deps.db, [row]))[0]!, token };
}

const listCursor = z.object({ c: z.string(), id: z.uuid() });

export async function listScimTokens(deps: Deps, target: Target, q: { limit: number; cursor?: string }) {
  const after = decodeCursor(q.cursor, listCursor);
  const rows = await listScimTokenRows(deps.db, target, { after, limit: q.limit });
  const page = pageOf(rows, q.limit, (r) => ({ c: r.createdAt.toISOString(), id: r.id }));
  return { data: await toJson(deps.db, page.data), nextCursor: page.nextCursor };
}

/** Revoked at once on every instance (each SCIM request reads the row); revoking again answers it unchanged. */
export async function revokeScimToken(deps: Deps, caller: Principal, id: string, meta: AuditRequestMeta) {
  assertWithinReach(caller, ORGANIZATION_WIDE);
  const row = await deps.db.transaction(async (tx) => {
    const { row: current, target } = await findInScope(tx, caller, SCIM_TOKEN, id);
    if (current.revokedAt) return current;
    const revoked = await revokeScimTokenRow(tx, id, deps.clock.now());
    await deps.audit.record(
      tx,
      {
        action: 'scim_token.revoke',
        actor: actorOf(caller),
        ...auditTenant(target),
        resourceType: 'scim_token',
        resourceId: id,
        details: { name: current.name },
      },
      meta,
    );
    return revoked;
  });
  return (await toJson(deps.db, [row]))[0]!;
}
