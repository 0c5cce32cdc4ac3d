// Domain proofs: a tenant claims a domain and proves it by publishing a random TXT record at
// `_gatehouse-challenge.<domain>`. Only a proven domain routes SSO discovery, lets an SSO provider provision or link
// accounts by address, enforces SSO on its addresses and makes them count as verified, and only for the tenant
// that proved it. One tenant at most holds a proof of a domain (a unique index decides a race).
import type { Deps } from '../../deps.js';
import type { Scope } from '../../access/scope.js';
import { personIdOf, type Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { randomToken } from '../../platform/crypto.js';
import { lookupTxt } from '../../platform/txt-lookup.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { assertMayChange, ownerForCreate } from '../config-items/index.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import { DOMAIN, findInScope, resolveTarget } from '../tenants/index.js';
import {
  deleteDomainRow,
  type DomainRow,
  insertDomain,
  listDomainRows,
  markVerified,
  provenElsewhere,
} from './repo.js';
import { type CreateDomain, domainCursor, TXT_PREFIX, TXT_VALUE_PREFIX } from './schemas.js';

export const txtNameOf = (domain: string) => `${TXT_PREFIX}.${domain}`;

export const domainToJson = (r: DomainRow) => ({
  id: r.id,
  domain: r.domain,
  partnerId: r.partnerId,
  orgId: r.orgId,
  status: r.status,
  txtName: txtNameOf(r.domain),
  txtValue: r.txtValue,
  createdAt: r.createdAt.toISOString(),
  verifiedAt: r.verifiedAt?.toISOString() ?? null,
});

const taken = () => new AppError('domain_taken');

export async function createDomain(deps: Deps, p: Principal, input: CreateDomain, meta: AuditRequestMeta) {
  const owner = await ownerForCreate(deps.db, p, input.orgId);
  // A claim on a domain another partner has proven could never be verified: say so now.
  if (await provenElsewhere(deps.db, input.domain, owner.partnerId)) throw taken();
  try {
    return await deps.db.transaction(async (tx) => {
      const row = await insertDomain(tx, {
        partnerId: owner.partnerId,
        orgId: owner.orgId,
        domain: input.domain,
        txtValue: `${TXT_VALUE_PREFIX}${randomToken(24)}`,
        createdBy: personIdOf(p),
      });
      await deps.audit.record(
        tx,
        {
          action: 'domain.create',
          actor: actorOf(p),
          partnerId: owner.partnerId,
          orgId: owner.orgId,
          resourceType: 'domain',
          resourceId: row.id,
          details: { domain: row.domain },
        },
        meta,
      );
      return domainToJson(row);
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw new AppError(
        'domain_exists',
        'This domain is already claimed by this partner or one of its organisations.',
      );
    throw err;
  }
}

export async function listDomains(
  deps: Deps,
  p: Principal,
  scope: Scope,
  q: { orgId?: string; limit: number; cursor?: string },
) {
  const after = decodeCursor(q.cursor, domainCursor);
  const where =
    q.orgId !== undefined
      ? { target: await resolveTarget(deps.db, p, q.orgId) }
      : { scope, partnerId: (await resolveTarget(deps.db, p, undefined)).partnerId };
  const rows = await listDomainRows(deps.db, where, { after, limit: q.limit });
  const page = pageOf(rows, q.limit, (r) => ({ d: r.domain, id: r.id }));
  return { data: page.data.map(domainToJson), nextCursor: page.nextCursor };
}

export async function findDomain(deps: Deps, p: Principal, id: string): Promise<DomainRow> {
  return (await findInScope(deps.db, p, DOMAIN, id)).row;
}

/**
 * Looks the TXT record up now (outside any transaction: a slow resolver holds no connection), then marks the claim
 * verified. A verified claim answers as it is.
 */
export async function verifyDomain(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  const row = await findDomain(deps, p, id);
  assertMayChange(p, row);
  if (row.status === 'verified') return domainToJson(row);
  if (await provenElsewhere(deps.db, row.domain, row.partnerId)) throw taken();
  const txtName = txtNameOf(row.domain);
  const answer = await lookupTxt(txtName, deps.config.dnsServers);
  if (!answer.ok || !answer.records.includes(row.txtValue)) {
    const reason = answer.ok ? 'record_missing' : answer.reason === 'absent' ? 'record_missing' : 'dns_unreachable';
    throw new AppError(
      'domain_not_verified',
      reason === 'dns_unreachable'
        ? `No DNS resolver answered for ${txtName}; try again later.`
        : `The TXT record ${row.txtValue} was not found at ${txtName}.`,
      { txtName, txtValue: row.txtValue, reason },
    );
  }
  try {
    return await deps.db.transaction(async (tx) => {
      const verified = await markVerified(tx, row.id, deps.clock.now());
      // Verified by a concurrent request of the same claim: answer with the row as it is now.
      if (!verified) return domainToJson((await findInScope(tx, p, DOMAIN, id)).row);
      await deps.audit.record(
        tx,
        {
          action: 'domain.verify',
          actor: actorOf(p),
          partnerId: row.partnerId,
          orgId: row.orgId,
          resourceType: 'domain',
          resourceId: row.id,
          details: { domain: row.domain },
        },
        meta,
      );
      return domainToJson(verified);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
}

export async function deleteDomain(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const row = (await findInScope(tx, p, DOMAIN, id)).row;
    assertMayChange(p, row);
    await deleteDomainRow(tx, row.id);
    await deps.audit.record(
      tx,
      {
        action: 'domain.delete',
        actor: actorOf(p),
        partnerId: row.partnerId,
        orgId: row.orgId,
        resourceType: 'domain',
        resourceId: row.id,
        details: { domain: row.domain, status: row.status },
      },
      meta,
    );
  });
}
