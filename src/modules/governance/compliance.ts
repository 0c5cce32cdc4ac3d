// Who does not yet meet the tenant's security policy, and the reminder mail an admin sends them. "Does not comply" is
// the request pipeline's own verdict (userPrincipal's mfaEnrollmentRequired): the member would be held at enrolment.
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { build } from '../../platform/mail-template.js';
import { covers, ORGANIZATION } from '../tenants/index.js';
import { tenantMemberIds, tenantName } from './repo.js';
import { userSubjects } from './subjects.js';

/** One reminder per member per day, and a tenant's admins send at most this many batches an hour. */
const REMINDER_EVERY_MS = 24 * 3600_000;
const BATCHES_PER_HOUR = 10;

interface Tenant {
  partnerId: string;
  orgId: string | null;
}

/** The tenant a policy page is about: an organisation the caller's scope covers, else the caller's own tenant. */
async function tenantOf(deps: Deps, caller: Principal, orgId: string | undefined): Promise<Tenant> {
  if (!caller.partnerId) throw new AppError('tenant_context_required');
  const id = orgId ?? caller.orgId;
  if (!id) return { partnerId: caller.partnerId, orgId: null };
  const found = await ORGANIZATION.load(deps.db, id);
  if (!found || !covers(caller, found.owner, ORGANIZATION.partnerOwned, ORGANIZATION.siteless))
    throw notFound('organization');
  return { partnerId: found.owner.partnerId, orgId: id };
}

export async function nonCompliant(deps: Deps, caller: Principal, orgId: string | undefined) {
  const tenant = await tenantOf(deps, caller, orgId);
  const ids = await tenantMemberIds(deps.db, tenant.partnerId, tenant.orgId);
  const subjects = await userSubjects(
    deps.db,
    deps.roleCache,
    deps.config.enable2fa,
    ids,
    tenant.partnerId,
    tenant.orgId,
    deps.clock.now().getTime(),
  );
  const scope = tenant.orgId ? ('organization' as const) : ('partner' as const);
  const data = [];
  for (const id of ids) {
    const own = subjects.get(id)?.find((s) => s.principal.tenantKind === scope);
    if (!own?.principal.mfaEnrollmentRequired) continue;
    const p = own.principal;
    data.push({
      userId: id,
      name: p.user?.name ?? '',
      email: p.email,
      roleName: p.roleName ?? '',
      missing: p.security.phishingResistantOnly ? ('passkey' as const) : ('second_factor' as const),
    });
  }
  return { tenant: { type: scope, partnerId: tenant.partnerId, orgId: tenant.orgId }, data };
}

/**
 * Mails each member who does not comply (all, or those of `userIds`) how to enrol. A member reminded in the last day
 * is skipped; the batch is audited (`security.compliance_reminder`) with who was reminded.
 */
export async function remindNonCompliant(
  deps: Deps,
  caller: Principal,
  body: { orgId?: string; userIds?: string[] },
  meta: AuditRequestMeta,
) {
  const { tenant, data } = await nonCompliant(deps, caller, body.orgId);
  const key = `compliance-remind:${tenant.orgId ?? tenant.partnerId}`;
  const now = deps.clock.now().getTime();
  const batch = await deps.store.hit(key, BATCHES_PER_HOUR, 3600_000, now);
  if (!batch.allowed) throw new AppError('rate_limited', undefined, { retryAfter: batch.retryAfter });
  const wanted = body.userIds ? new Set(body.userIds) : null;
  const targets = data.filter((m) => !wanted || wanted.has(m.userId));
  const reminded: string[] = [];
  const skipped: string[] = [];
  for (const m of targets) {
    const once = await deps.store.hit(`${key}:${m.userId}`, 1, REMINDER_EVERY_MS, now);
    (once.allowed ? reminded : skipped).push(m.userId);
  }
  const name = await tenantName(deps.db, tenant.partnerId, tenant.orgId);
  await deps.db.transaction(async (tx) => {
    for (const m of targets.filter((t) => reminded.includes(t.userId)))
      await deps.outbox.enqueue(
        tx,
        build(
          'security_compliance_reminder',
          m.email,
          `${name} asks you to set up two-step verification`,
          [
            m.missing === 'passkey'
              ? `${name} requires a passkey as your second factor. Until you add one, you are asked to set it up at your next sign-in.`
              : `${name} requires two-step verification. Until you set it up, you are asked to do so at your next sign-in.`,
            `${caller.user?.name || caller.email} sent you this reminder.`,
          ],
          { label: 'Set it up now', url: `${deps.config.appUrl}/enroll-mfa` },
        ),
      );
    await deps.audit.record(
      tx,
      {
        action: 'security.compliance_reminder',
        actor: { userId: caller.userId, email: caller.email },
        partnerId: tenant.partnerId,
        orgId: tenant.orgId,
        resourceType: tenant.orgId ? 'organization' : 'partner',
        resourceId: tenant.orgId ?? tenant.partnerId,
        details: { reminded, skipped },
      },
      meta,
    );
  });
  deps.outbox.kick();
  return { reminded, skipped };
}
