// Contacts CRUD (organizations:read|write): organisation-level or pinned to a site.
import { and, asc, eq, gt, ilike, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { contacts } from '../../db/schema/index.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, likePrefix, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../audit/writer.js';
import { accessibleOrg } from '../tenants/access.js';
import { findSite } from '../tenants/sites-service.js';
import { CONTACT, findInScope } from '../tenants/by-id.js';

type Row = typeof contacts.$inferSelect;
export const contactToJson = (c: Row) => ({
  id: c.id,
  orgId: c.orgId,
  siteId: c.siteId,
  externalId: c.externalId,
  previousId: c.previousId,
  firstName: c.firstName,
  lastName: c.lastName,
  email: c.email,
  phone: c.phone,
  title: c.title,
  createdAt: c.createdAt.toISOString(),
  updatedAt: c.updatedAt.toISOString(),
});
const actor = actorOf;
const isUnique = (err: unknown) =>
  ((err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code) === '23505';
const cursor = z.object({ n: z.string(), id: z.uuid() });

export async function listContacts(
  db: Executor,
  p: Principal,
  q: { orgId: string; siteId?: string; limit: number; cursor?: string; search?: string },
) {
  await accessibleOrg(db, p, q.orgId);
  const after = decodeCursor(q.cursor, cursor);
  const sortKey = sql<string>`lower(coalesce(${contacts.lastName}, '') || ' ' || coalesce(${contacts.firstName}, '') || ' ' || coalesce(${contacts.email}, ''))`;
  const rows = await db
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
  const page = pageOf(rows, q.limit, (r) => ({ n: r.k, id: r.c.id }));
  return { data: page.data.map((r) => contactToJson(r.c)), nextCursor: page.nextCursor };
}

export async function findContact(db: Executor, p: Principal, id: string): Promise<Row> {
  return (await findInScope(db, p, CONTACT, id)).row;
}

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

export async function updateContact(deps: Deps, p: Principal, id: string, patch: ContactPatch, meta: AuditRequestMeta) {
  try {
    return await deps.db.transaction(async (tx) => {
      const current = await findContact(tx, p, id);
      if (patch.siteId) {
        const site = await findSite(tx, p, patch.siteId).catch(() => null);
        if (!site || site.orgId !== current.orgId)
          throw new AppError('validation_failed', 'The site is not of this organization.', {
            details: { fieldErrors: { siteId: ['Not a site of this organization'] }, formErrors: [] },
          });
      }
      const [row] = await tx
        .update(contacts)
        .set({ ...patch, updatedAt: deps.clock.now() })
        .where(eq(contacts.id, id))
        .returning();
      await deps.audit.record(
        tx,
        {
          action: 'contact.update',
          actor: actor(p),
          partnerId: p.partnerId,
          orgId: current.orgId,
          resourceType: 'contact',
          resourceId: id,
          details: { changed: Object.keys(patch).sort() },
        },
        meta,
      );
      return contactToJson(row!);
    });
  } catch (err) {
    if (isUnique(err))
      throw new AppError('conflict', 'Another contact of the organization has this externalId or previousId.');
    throw err;
  }
}

export async function deleteContact(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const current = await findContact(tx, p, id);
    await tx.delete(contacts).where(eq(contacts.id, id));
    await deps.audit.record(
      tx,
      {
        action: 'contact.delete',
        actor: actor(p),
        partnerId: p.partnerId,
        orgId: current.orgId,
        resourceType: 'contact',
        resourceId: id,
      },
      meta,
    );
  });
}
