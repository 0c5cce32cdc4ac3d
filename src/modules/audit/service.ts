// Rules of the audit trail's read side: who sees which records, export, chain verification.
import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { scopeOf } from '../../access/scope.js';
import { mayAccessOrg } from '../../access/decision.js';
import { CONTENT_TYPES, exportStream, recordJson, type ExportFormat } from './export.js';
import type { AuditVisibility } from '../../db/tenant-filter.js';
import { newestFirst, orgBelongsToPartner } from './repo.js';
import type { AuditFilters, AuditRecordJson, VerifyResult } from './schemas.js';
import { verifyChain } from './verify.js';
import { actorOf, type AuditRequestMeta } from './writer.js';

/**
 * Records are scoped exactly like the data they describe: an organisation caller sees its organisation's; a partner
 * caller sees the partner's own events and those of the organisations it may access (all, selected or none).
 */
export function visibilityOf(p: Principal): AuditVisibility {
  if (!p.tenantKind || !p.partnerId) throw new AppError('tenant_context_required');
  if (p.tenantKind === 'organization') return { kind: 'organization', partnerId: p.partnerId, orgId: p.orgId! };
  const reach = scopeOf(p).orgs;
  return {
    kind: 'partner',
    partnerId: p.partnerId,
    // all_except: the excluded organisations are among the scope's `except`.
    orgIds: p.orgAccess === 'all' || p.orgAccess === 'all_except' ? 'all' : p.orgAccess === 'selected' ? p.orgIds : [],
    except: reach.kind === 'one' ? [] : reach.except,
    partnerView: true,
  };
}

/** An orgId filter outside the caller's scope is 404, as for every other tenant-scoped read. */
async function assertOrgInScope(
  deps: Deps,
  p: Principal,
  v: AuditVisibility,
  orgId: string | undefined,
): Promise<void> {
  if (orgId === undefined) return;
  const visible =
    v.kind === 'organization'
      ? orgId === v.orgId
      : mayAccessOrg(p, orgId) && (await orgBelongsToPartner(deps.db, v.partnerId, orgId));
  if (!visible) throw new AppError('not_found', 'The organization was not found.');
}

const cursorKey = z.object({ seq: z.number().int().positive() });

export async function listAuditLogs(
  deps: Deps,
  p: Principal,
  query: AuditFilters & { limit: number; cursor?: string },
): Promise<{ data: AuditRecordJson[]; nextCursor: string | null }> {
  const { limit, cursor, ...filters } = query;
  const v = visibilityOf(p);
  await assertOrgInScope(deps, p, v, filters.orgId);
  const after = decodeCursor(cursor, cursorKey);
  const rows = await newestFirst(deps.db, v, filters, { beforeSeq: after?.seq ?? null, limit: limit + 1 });
  const page = pageOf(rows, limit, (r) => ({ seq: r.seq }));
  return { data: page.data.map(recordJson), nextCursor: page.nextCursor };
}

const definedOnly = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/**
 * Records audit.export (committed before the first byte goes out, so an export cannot happen unrecorded), then
 * hands back the stream. The record carries the organisation when the export is filtered to one.
 */
export async function startExport(
  deps: Deps,
  p: Principal,
  query: AuditFilters & { format: ExportFormat },
  meta: AuditRequestMeta,
): Promise<{ stream: Readable; contentType: string; filename: string }> {
  const { format, ...filters } = query;
  const v = visibilityOf(p);
  await assertOrgInScope(deps, p, v, filters.orgId);
  await deps.db.transaction((tx) =>
    deps.audit.record(
      tx,
      {
        action: 'audit.export',
        actor: actorOf(p),
        partnerId: p.partnerId,
        orgId: p.tenantKind === 'organization' ? p.orgId : (filters.orgId ?? null),
        resourceType: 'audit_log',
        details: { format, filters: definedOnly(filters) },
      },
      meta,
    ),
  );
  const stamp = deps.clock.now().toISOString().replace(/[:.]/g, '-');
  return {
    stream: exportStream(deps.db, v, filters, format),
    contentType: CONTENT_TYPES[format],
    filename: `audit-logs-${stamp}.${format}`,
  };
}

/**
 * A partner's chain holds the events of every organisation of the partner, so only a caller who may see all of
 * them verifies it (the route requires full organisation access); organisation callers are refused.
 */
export async function verifyOwnChain(deps: Deps, p: Principal): Promise<VerifyResult> {
  if (p.tenantKind !== 'partner' || !p.partnerId) {
    throw new AppError(
      'forbidden',
      'Verifying the chain needs a partner context: the chain spans every organisation of the partner.',
    );
  }
  return verifyChain(deps.db, p.partnerId);
}
