// Contacts: the SQL of the CRUD and of the CSV import (its batched statements: one INSERT and one UPDATE per batch,
// each row set travelling as one JSON parameter). Every query names the organisation the caller was let into.
import { and, asc, eq, gt, ilike, or, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { contacts, sites } from '../../db/schema/index.js';
import { likePrefix } from '../../db/order.js';
import type { ContactFields } from './matching.js';

export type ContactRow = typeof contacts.$inferSelect;

export interface ContactPatch {
  siteId?: string | null;
  externalId?: string | null;
  previousId?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  phone?: string | null;
  title?: string | null;
}

/** One page (plus one row) of an organisation's contacts, by lower(last first email), then id. */
export function listContactRows(
  db: Executor,
  q: { orgId: string; siteId?: string; search?: string; after: { n: string; id: string } | null; limit: number },
) {
  const after = q.after;
  const sortKey = sql<string>`lower(coalesce(${contacts.lastName}, '') || ' ' || coalesce(${contacts.firstName}, '') || ' ' || coalesce(${contacts.email}, ''))`;
  return db
    .select({ c: contacts, k: sortKey })
    .from(contacts)
    .where(
      and(
        eq(contacts.orgId, q.orgId),
        q.siteId ? eq(contacts.siteId, q.siteId) : undefined,
        q.search
          ? or(
              ilike(contacts.email, likePrefix(q.search)),
              ilike(contacts.firstName, likePrefix(q.search)),
              ilike(contacts.lastName, likePrefix(q.search)),
            )
          : undefined,
        after ? or(gt(sortKey, after.n), and(eq(sortKey, after.n), gt(contacts.id, after.id))) : undefined,
      ),
    )
    .orderBy(asc(sortKey), asc(contacts.id))
    .limit(q.limit + 1);
}

export async function updateContactRow(
  tx: Executor,
  id: string,
  set: ContactPatch & { updatedAt: Date },
): Promise<ContactRow | undefined> {
  const [row] = await tx.update(contacts).set(set).where(eq(contacts.id, id)).returning();
  return row;
}

export async function deleteContactRow(tx: Executor, id: string): Promise<void> {
  await tx.delete(contacts).where(eq(contacts.id, id));
}

/** Imports into one organisation take turns (held until the transaction ends). */
export async function lockOrgImports(tx: Executor, orgId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`contacts-import:${orgId}`}, 0))`);
}

export const siteNamesOf = (tx: Executor, orgId: string) =>
  tx.select({ id: sites.id, name: sites.name }).from(sites).where(eq(sites.orgId, orgId));

const contactColumns = {
  id: contacts.id,
  externalId: contacts.externalId,
  previousId: contacts.previousId,
  firstName: contacts.firstName,
  lastName: contacts.lastName,
  email: contacts.email,
  phone: contacts.phone,
  title: contacts.title,
  siteId: contacts.siteId,
};

/** A page of the organisation's contacts (the import's fields) after the id `after`, by id. */
export const contactPage = (tx: Executor, orgId: string, after: string | null, limit: number) =>
  tx
    .select(contactColumns)
    .from(contacts)
    .where(and(eq(contacts.orgId, orgId), after ? gt(contacts.id, after) : undefined))
    .orderBy(asc(contacts.id))
    .limit(limit);

export type ContactWrite = ContactFields & { id: string };

/**
 * A batch travels as one JSON parameter expanded by jsonb_to_recordset: building and binding a multi-row VALUES list
 * costs about a millisecond of main-thread time per row through the ORM, the JSON text a few microseconds.
 */
const RECORD = sql.raw(
  'id uuid, site_id uuid, external_id text, previous_id text, first_name text, last_name text, email text, phone text, title text',
);
const recordset = (rows: Iterable<ContactWrite>) => {
  const out: unknown[] = [];
  for (const w of rows)
    out.push({
      id: w.id,
      site_id: w.siteId,
      external_id: w.externalId,
      previous_id: w.previousId,
      first_name: w.firstName,
      last_name: w.lastName,
      email: w.email,
      phone: w.phone,
      title: w.title,
    });
  return JSON.stringify(out);
};

/** One UPDATE for a batch of changed contacts of the organisation. */
export async function updateContactBatch(
  tx: Executor,
  orgId: string,
  writes: Iterable<ContactWrite>,
  at: string,
): Promise<void> {
  const rows = recordset(writes);
  await tx.execute(sql`
        update contacts c set site_id = x.site_id, external_id = x.external_id, previous_id = x.previous_id, first_name = x.first_name,
          last_name = x.last_name, email = x.email, phone = x.phone, title = x.title, updated_at = ${at}::timestamptz
        from jsonb_to_recordset(${rows}::jsonb) as x(${RECORD})
        where c.id = x.id and c.org_id = ${orgId}::uuid`);
}

/** One INSERT for a batch of new contacts of the organisation. */
export async function insertContactBatch(
  tx: Executor,
  orgId: string,
  writes: Iterable<ContactWrite>,
  at: string,
): Promise<void> {
  const rows = recordset(writes);
  await tx.execute(sql`
        insert into contacts (id, org_id, site_id, external_id, previous_id, first_name, last_name, email, phone, title, created_at, updated_at)
        select x.id, ${orgId}::uuid, x.site_id, x.external_id, x.previous_id, x.first_name, x.last_name, x.email, x.phone, x.title, ${at}::timestamptz, ${at}::timestamptz
        from jsonb_to_recordset(${rows}::jsonb) as x(${RECORD})`);
}
