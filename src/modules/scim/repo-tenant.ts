// The tenant of every SCIM statement: the condition that limits a query to it, and the lock its writes take first.
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/connect.js';
import { ownedBy, type Target } from '../../db/tenant-filter.js';

type TenantTable = { partnerId: any; orgId: any };
export const inTenant = (table: TenantTable, t: Target): SQL =>
  and(eq(table.partnerId, t.partnerId), ownedBy(t, table))!;

/** Every SCIM write of a tenant in turn: a retried create sees the first one's row (409 uniqueness), never a race. */
export const lockTenant = (tx: Tx, t: Target) =>
  tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`scim:${t.partnerId}:${t.orgId ?? ''}`}, 0))`);
