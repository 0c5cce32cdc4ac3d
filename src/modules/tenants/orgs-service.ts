// Organisations and the partner's own record, with their security settings.
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../../access/audit.js';
import { slugify } from '../../platform/slug.js';
import { bumpAuthzEpoch } from '../../access/repo.js';
import type { Scope } from '../../access/scope.js';
import { ORGANIZATION_WIDE } from '../../access/ceiling.js';
import { assertWithinReach } from '../../http/refusal.js';
import { accessibleOrg, assertFullPartnerAccess } from './access.js';
import { designateBreakGlass } from './break-glass.js';
import { ipAllowed } from '../../platform/cidr.js';
import { accessMails } from '../../access/mails.js';
import { adminsOfBothSides } from '../../access/repo.js';
import {
  clearOrgRoles,
  deleteOrgRow,
  insertOrg,
  listOrgRows,
  partnerById,
  partnerSettings,
  rolesNamableBy,
  updateOrgRow,
  updatePartnerRow,
  type OrganizationRow,
} from './repo.js';
import {
  effectiveSecurity,
  jitStrictness,
  mergeSettings,
  mspAccessOf,
  mspStrictness,
  normaliseAllowlist,
  type TenantSettings,
} from '../../access/settings.js';

type OrgRow = OrganizationRow;
export const orgToJson = (o: OrgRow) => ({
  id: o.id,
  partnerId: o.partnerId,
  name: o.name,
  slug: o.slug,
  status: o.status,
  settings: (o.settings ?? {}) as Record<string, unknown>,
  createdAt: o.createdAt.toISOString(),
  updatedAt: o.updatedAt.toISOString(),
});

const actor = actorOf;
const cursor = z.object({ n: z.string(), id: z.uuid() });

export async function listOrgs(db: Executor, scope: Scope, q: { limit: number; cursor?: string; search?: string }) {
  const after = decodeCursor(q.cursor, cursor);
  const rows = await listOrgRows(db, scope, { search: q.search, after, limit: q.limit });
  const page = pageOf(rows, q.limit, (o) => ({ n: o.name.toLowerCase(), id: o.id }));
  return { data: page.data.map(orgToJson), nextCursor: page.nextCursor };
}

export async function getOrg(db: Executor, p: Principal, id: string) {
  return orgToJson(await accessibleOrg(db, p, id));
}

export async function createOrg(
  deps: Deps,
  p: Principal,
  input: { name: string; slug?: string; settings?: TenantSettings },
  meta: AuditRequestMeta,
) {
  assertFullPartnerAccess(p);
  if (input.settings?.security?.breakGlassUserId !== undefined) {
    throw new AppError('validation_failed', 'Only a partner designates a break-glass account.', {
      details: { fieldErrors: { 'settings.security.breakGlassUserId': ['Partner setting only'] }, formErrors: [] },
    });
  }
  const slug = input.slug ?? slugify(input.name);
  try {
    return await deps.db.transaction(async (tx) => {
      const org = await insertOrg(tx, {
        partnerId: p.partnerId!,
        name: input.name,
        slug,
        settings: input.settings ? normaliseAllowlist(input.settings) : {},
      });
      await deps.audit.record(
        tx,
        {
          action: 'organization.create',
          actor: actor(p),
          partnerId: p.partnerId,
          orgId: org.id,
          resourceType: 'organization',
          resourceId: org.id,
          details: { name: input.name, slug },
        },
        meta,
      );
      return orgToJson(org);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('slug_taken', 'An organization with this slug already exists.');
    throw err;
  }
}

export async function updateOrg(
  deps: Deps,
  p: Principal,
  id: string,
  body: {
    name?: string;
    slug?: string;
    status?: 'active' | 'suspended';
    settings?: TenantSettings;
    confirmLockout?: boolean;
  },
  meta: AuditRequestMeta,
) {
  // The organisation's record and settings (mspAccess, its IP allow-list, its security policy) hold every site: only a
  // caller whose reach is organisation-wide changes them (a site-restricted admin answers 403 permission_ceiling).
  assertWithinReach(p, ORGANIZATION_WIDE);
  const { confirmLockout, ...given } = body;
  if (given.settings?.security?.breakGlassUserId !== undefined) {
    throw new AppError('validation_failed', 'Only a partner designates a break-glass account.', {
      details: { fieldErrors: { 'settings.security.breakGlassUserId': ['Partner setting only'] }, formErrors: [] },
    });
  }
  if (given.settings?.security?.jitMaxMinutes !== undefined) {
    throw new AppError('validation_failed', 'A partner sets the longest just-in-time access.', {
      details: { fieldErrors: { 'settings.security.jitMaxMinutes': ['Partner setting only'] }, formErrors: [] },
    });
  }
  if (given.settings?.requireRelationships !== undefined) {
    throw new AppError('validation_failed', 'A partner decides whether its staff need relationships.', {
      details: { fieldErrors: { 'settings.requireRelationships': ['Partner setting only'] }, formErrors: [] },
    });
  }
  if (given.settings?.governor?.coSign !== undefined) {
    throw new AppError('validation_failed', 'A partner decides how co-signatures unlock its staff.', {
      details: { fieldErrors: { 'settings.governor.coSign': ['Partner setting only'] }, formErrors: [] },
    });
  }
  // The organisation's own budget is its control over what speaks for its partner: only its own admins change it.
  if (given.settings?.governor?.budget !== undefined && p.tenantKind !== 'organization')
    throw new AppError('budget_customer_only');
  const patch = given.settings ? { ...given, settings: normaliseAllowlist(given.settings) } : given;
  assertNoLockout(p, patch.settings, meta, confirmLockout);
  try {
    const updated = await deps.db.transaction(async (tx) => {
      const current = await accessibleOrg(tx, p, id);
      await assertNamableRoles(tx, current.partnerId, current.id, patch.settings);
      const settings = patch.settings ? mergeSettings(current.settings, patch.settings) : undefined;
      await mspAccessChange(deps, tx, p, current, settings, meta);
      // Budgets are kept per authorisation epoch by every instance: a change reaches the next decision everywhere.
      if (patch.settings?.governor) await bumpAuthzEpoch(tx);
      const org = await updateOrgRow(tx, id, {
        ...patch,
        ...(settings ? { settings } : {}),
        updatedAt: deps.clock.now(),
      });
      await deps.audit.record(
        tx,
        {
          action: 'organization.update',
          actor: actor(p),
          partnerId: org.partnerId,
          orgId: id,
          resourceType: 'organization',
          resourceId: id,
          details: { changed: Object.keys(patch).sort(), ...(patch.settings ? { settings: patch.settings } : {}) },
        },
        meta,
      );
      return orgToJson(org);
    });
    deps.outbox.kick();
    return updated;
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('slug_taken', 'An organization with this slug already exists.');
    throw err;
  }
}

/** Deletes the organisation and everything in it (sites, devices, members' associations, roles, keys, contacts). */
export async function deleteOrg(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  assertFullPartnerAccess(p);
  await deps.db.transaction(async (tx) => {
    const org = await accessibleOrg(tx, p, id);
    // Roles of the organisation are referenced by its memberships with RESTRICT: remove those first.
    await clearOrgRoles(tx, id);
    await bumpAuthzEpoch(tx);
    await deleteOrgRow(tx, id);
    await deps.audit.record(
      tx,
      {
        action: 'organization.delete',
        actor: actor(p),
        partnerId: org.partnerId,
        orgId: id,
        resourceType: 'organization',
        resourceId: id,
        details: { name: org.name },
      },
      meta,
    );
  });
}

export async function getPartner(db: Executor, p: Principal) {
  if (!p.partnerId) throw new AppError('tenant_context_required');
  const row = await partnerById(db, p.partnerId);
  if (!row) throw notFound('partner');
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    status: row.status,
    settings: (row.settings ?? {}) as Record<string, unknown>,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Force-MFA roles a policy names must be roles this tenant can see: an unknown or foreign id is refused, not ignored. */
async function assertNamableRoles(
  db: Executor,
  partnerId: string,
  orgId: string | null,
  settings: TenantSettings | undefined,
): Promise<void> {
  const ids = settings?.security?.forceMfaRoleIds ?? [];
  const known = await rolesNamableBy(db, partnerId, orgId, ids);
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length)
    throw new AppError('validation_failed', 'A Force MFA role is not a role of this tenant.', {
      details: {
        fieldErrors: { 'settings.security.forceMfaRoleIds': unknown.map((id) => `Unknown role ${id}`) },
        formErrors: [],
      },
    });
}

export async function updatePartner(
  deps: Deps,
  p: Principal,
  body: { name?: string; settings?: TenantSettings; confirmLockout?: boolean },
  meta: AuditRequestMeta,
) {
  assertFullPartnerAccess(p);
  const { confirmLockout, ...given } = body;
  if (given.settings?.mspAccess !== undefined) {
    throw new AppError('validation_failed', 'mspAccess is an organisation setting.', {
      details: { fieldErrors: { 'settings.mspAccess': ['Organisation setting only'] }, formErrors: [] },
    });
  }
  if (given.settings?.jitApproval !== undefined) {
    throw new AppError('validation_failed', 'jitApproval is an organisation setting.', {
      details: { fieldErrors: { 'settings.jitApproval': ['Organisation setting only'] }, formErrors: [] },
    });
  }
  const patch = given.settings ? { ...given, settings: normaliseAllowlist(given.settings) } : given;
  assertNoLockout(p, patch.settings, meta, confirmLockout);
  await deps.db.transaction(async (tx) => {
    await assertNamableRoles(tx, p.partnerId!, null, patch.settings);
    const current = await partnerSettings(tx, p.partnerId!, true);
    await designateBreakGlass(deps, tx, p, current?.settings, patch.settings?.security?.breakGlassUserId, meta);
    const settings = patch.settings ? mergeSettings(current?.settings, patch.settings) : undefined;
    if (patch.settings?.governor) await bumpAuthzEpoch(tx);
    await updatePartnerRow(tx, p.partnerId!, {
      ...patch,
      ...(settings ? { settings } : {}),
      updatedAt: deps.clock.now(),
    });
    await deps.audit.record(
      tx,
      {
        action: 'partner.update',
        actor: actor(p),
        partnerId: p.partnerId,
        resourceType: 'partner',
        resourceId: p.partnerId,
        details: { changed: Object.keys(patch).sort(), ...(patch.settings ? { settings: patch.settings } : {}) },
      },
      meta,
    );
  });
  deps.outbox.kick();
  return getPartner(deps.db, p);
}

/**
 * mspAccess: only the organisation's own admins loosen it; a partner member may only tighten it. A change
 * is audited and mailed to both sides' admins (sent once the transaction commits).
 */
async function mspAccessChange(
  deps: Deps,
  tx: Executor,
  p: Principal,
  current: OrgRow,
  next: TenantSettings | undefined,
  meta: AuditRequestMeta,
) {
  if (!next) return;
  // jitApproval: the partner may make approval stricter, never looser (it would approve its own access).
  const jitFrom = (current.settings as TenantSettings | null)?.jitApproval ?? 'auto';
  const jitTo = next.jitApproval ?? 'auto';
  if (jitStrictness(jitTo) < jitStrictness(jitFrom) && p.tenantKind !== 'organization')
    throw new AppError('jit_approval_customer_only');
  const from = mspAccessOf(current.settings);
  const to = mspAccessOf(next);
  if (from === to) return;
  if (mspStrictness(to) < mspStrictness(from) && p.tenantKind !== 'organization')
    throw new AppError('msp_access_customer_only');
  await deps.audit.record(
    tx,
    {
      action: 'organization.msp_access.change',
      actor: actor(p),
      partnerId: current.partnerId,
      orgId: current.id,
      resourceType: 'organization',
      resourceId: current.id,
      details: { from, to },
    },
    meta,
  );
  const side = await adminsOfBothSides(tx, current.partnerId, current.id);
  for (const email of side.emails) {
    await deps.outbox.enqueue(
      tx,
      accessMails.mspAccessChanged(email, {
        orgName: side.orgName,
        partnerName: side.partnerName,
        from,
        to,
        actor: p.email,
        url: `${deps.config.appUrl}/organizations/${current.id}`,
      }),
    );
  }
}

/**
 * Saving an IP allow-list that leaves out the saving admin's own address would lock them out: refused (409 ip_lockout)
 * unless the body says confirmLockout: true. The partner's break-glass account is exempt from lists, so never locked out.
 */
function assertNoLockout(
  p: Principal,
  settings: TenantSettings | undefined,
  meta: AuditRequestMeta,
  confirmed: boolean | undefined,
): void {
  const list = settings?.security?.ipAllowlist;
  if (!list?.length || confirmed === true || p.breakGlass === true) return;
  if (!meta.ip || !ipAllowed(meta.ip, list))
    throw new AppError(
      'ip_lockout',
      `Your current address (${meta.ip ?? 'unknown'}) is not in the list; send confirmLockout: true to save it anyway.`,
    );
}

export async function orgEffectiveSettings(db: Executor, p: Principal, id: string) {
  const org = await accessibleOrg(db, p, id);
  const partner = await partnerSettings(db, org.partnerId);
  return {
    orgId: org.id,
    security: effectiveSecurity(partner?.settings, org.settings),
    sources: {
      partner: (partner?.settings ?? {}) as Record<string, unknown>,
      organization: (org.settings ?? {}) as Record<string, unknown>,
    },
  };
}
