// IP allow-lists of partners and organisations, enforced at sign-in, at refresh and on every request,
// through the one decision (ipListReason). The partner's break-glass account is exempt; each exempted use is audited.
import type { AuditRecorder, AuditRequestMeta } from '../access/audit.js';
import { ipListReason, ownIpReason } from '../access/decision.js';
import type { Principal } from '../access/principal.js';
import { membershipTenantSettings } from '../access/repo.js';
import { breakGlassUserOf, ipAllowlistOf } from '../access/settings.js';
import type { Executor } from '../db/connect.js';
import { normaliseIp } from '../platform/cidr.js';
import { AppError } from './errors.js';

interface PolicyDeps {
  db: Executor;
  audit: AuditRecorder;
}

const refused = (whose: string) =>
  new AppError('ip_not_allowed', `This address is outside the IP allow-list of your ${whose}.`);

/** Exempted uses already audited by this process (session + address), so a busy session writes one record an hour. */
const audited = new Map<string, number>();
const AUDIT_EVERY_MS = 3600_000;
function firstUse(key: string, now: number): boolean {
  const at = audited.get(key);
  if (at !== undefined && now - at < AUDIT_EVERY_MS) return false;
  if (audited.size > 10_000) audited.clear();
  audited.set(key, now);
  return true;
}

async function auditBreakGlass(
  deps: PolicyDeps,
  tx: Executor,
  e: {
    userId: string;
    email: string;
    partnerId: string | null;
    sessionId: string | null;
    ip: string | null;
    at: string;
  },
  meta: AuditRequestMeta,
) {
  await deps.audit.record(
    tx,
    {
      action: 'access.break_glass',
      actor: { userId: e.userId, email: e.email },
      partnerId: e.partnerId,
      resourceType: 'session',
      resourceId: e.sessionId,
      details: { exempted: 'ip_allowlist', ip: e.ip, at: e.at },
    },
    meta,
  );
}

/** Every request of a person: the own tenant's list (the partner's for partner members, the organisation's for its members). */
export async function enforceOwnIpAllowlist(
  deps: PolicyDeps,
  p: Principal,
  meta: AuditRequestMeta,
  at: 'request' | 'refresh' = 'request',
): Promise<void> {
  const reason = ownIpReason(p);
  if (!reason.allowed) throw refused(p.tenantKind === 'partner' ? 'partner' : 'organization');
  if (reason.breakGlass && (at === 'refresh' || firstUse(`${p.sessionId}|${p.ip}`, Date.now()))) {
    await auditBreakGlass(
      deps,
      deps.db,
      { userId: p.userId, email: p.email, partnerId: p.partnerId, sessionId: p.sessionId, ip: p.ip ?? null, at },
      meta,
    );
  }
}

/** Sign-in to a membership (inside the sign-in transaction): the address must be in the tenant's list. */
export async function enforceSignInAddress(
  deps: PolicyDeps,
  tx: Executor,
  user: { id: string; email: string },
  ctx: { scope: 'partner' | 'organization' | null; partnerId: string | null; orgId: string | null },
  meta: AuditRequestMeta,
  /** The tenant's settings when the caller read them already (password sign-in reads them with the user). */
  settings?: unknown,
): Promise<void> {
  if (!ctx.scope) return;
  const tenantSettings = settings !== undefined ? settings : await membershipTenantSettings(tx, ctx);
  const list = ipAllowlistOf(tenantSettings);
  if (list.length === 0) return;
  const breakGlass = ctx.scope === 'partner' && breakGlassUserOf(tenantSettings) === user.id;
  const ip = meta.ip ? (normaliseIp(meta.ip) ?? meta.ip) : null;
  const reason = ipListReason(list, ip ?? '', breakGlass, ctx.scope === 'partner' ? 'the partner' : 'the organisation');
  if (!reason.allowed) throw refused(ctx.scope === 'partner' ? 'partner' : 'organization');
  if (reason.breakGlass)
    await auditBreakGlass(
      deps,
      tx,
      { userId: user.id, email: user.email, partnerId: ctx.partnerId, sessionId: null, ip, at: 'sign-in' },
      meta,
    );
}
