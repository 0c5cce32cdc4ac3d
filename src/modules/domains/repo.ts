// Domains: the SQL of domain claims and proofs. Lists take the caller's scope; the cross-tenant reads (is this domain
// proven, and by whom) are only ever answered for a verified domain, in the system context named for them.
import { and, asc, eq, gt, inArray, isNull, ne, or } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { domainOfAddress } from '../../db/domain-proof.js';
import { asSystemWithin } from '../../db/row-security.js';
import { domains } from '../../db/schema/index.js';
import { orgCondition, ownedBy, type Target, type Reach } from '../../db/tenant-filter.js';

export type DomainRow = typeof domains.$inferSelect;
export type NewDomain = typeof domains.$inferInsert;
const cols = { partnerId: domains.partnerId, orgId: domains.orgId };

/** What a list shows: one target's own domains, or (no target) everything of the scope, partner level included. */
export type DomainListWhere = { target: Target } | { scope: Reach; partnerId: string };

export function listDomainRows(
  db: Executor,
  where: DomainListWhere,
  q: { after: { d: string; id: string } | null; limit: number },
) {
  const tenant =
    'target' in where
      ? ownedBy(where.target, cols)
      : and(
          eq(domains.partnerId, where.partnerId),
          where.scope.orgs.kind === 'one'
            ? orgCondition(where.scope, domains.orgId)
            : or(isNull(domains.orgId), orgCondition(where.scope, domains.orgId)),
        );
  const after = q.after;
  return db
    .select()
    .from(domains)
    .where(
      and(
        tenant,
        after ? or(gt(domains.domain, after.d), and(eq(domains.domain, after.d), gt(domains.id, after.id))) : undefined,
      ),
    )
    .orderBy(asc(domains.domain), asc(domains.id))
    .limit(q.limit + 1);
}

export async function insertDomain(db: Executor, values: NewDomain): Promise<DomainRow> {
  const [row] = await db.insert(domains).values(values).returning();
  return row!;
}

/** Marks a pending claim verified; undefined when it was not pending any more. The unique index refuses a second tenant. */
export async function markVerified(db: Executor, id: string, now: Date): Promise<DomainRow | undefined> {
  const [row] = await db
    .update(domains)
    .set({ status: 'verified', verifiedAt: now, updatedAt: now })
    .where(and(eq(domains.id, id), eq(domains.status, 'pending')))
    .returning();
  return row;
}

export async function deleteDomainRow(db: Executor, id: string): Promise<void> {
  await db.delete(domains).where(eq(domains.id, id));
}

/** Whether a partner other than `partnerId` has proven the domain (yes or no: nothing else crosses tenants). */
export function provenElsewhere(db: Executor, domain: string, partnerId: string): Promise<boolean> {
  return asSystemWithin(db, 'domain-proof', async () => {
    const [hit] = await db
      .select({ id: domains.id })
      .from(domains)
      .where(and(eq(domains.domain, domain), eq(domains.status, 'verified'), ne(domains.partnerId, partnerId)))
      .limit(1);
    return Boolean(hit);
  });
}

/** The tenant that proved the address's domain, or null. */
export function verifiedDomainOwner(
  db: Executor,
  address: string,
): Promise<{ partnerId: string; orgId: string | null } | null> {
  return asSystemWithin(db, 'domain-proof', async () => {
    const [hit] = await db
      .select({ partnerId: domains.partnerId, orgId: domains.orgId })
      .from(domains)
      .where(and(eq(domains.domain, domainOfAddress(address)), eq(domains.status, 'verified')))
      .limit(1);
    return hit ?? null;
  });
}

/** Verified domains among `names` proven by exactly this tenant. */
export async function provenAmong(
  db: Executor,
  owner: { partnerId: string; orgId: string | null },
  names: string[],
): Promise<Set<string>> {
  if (!names.length) return new Set();
  const rows = await db
    .select({ domain: domains.domain })
    .from(domains)
    .where(
      and(
        eq(domains.status, 'verified'),
        eq(domains.partnerId, owner.partnerId),
        owner.orgId ? eq(domains.orgId, owner.orgId) : isNull(domains.orgId),
        inArray(domains.domain, names),
      ),
    );
  return new Set(rows.map((r) => r.domain));
}

/** Whether exactly this tenant (the partner itself, or one organisation) proved the address's domain. */
export async function domainProvenBy(
  db: Executor,
  address: string,
  tenant: { partnerId: string; orgId: string | null },
): Promise<boolean> {
  const owner = await verifiedDomainOwner(db, address);
  return owner !== null && owner.partnerId === tenant.partnerId && owner.orgId === tenant.orgId;
}
