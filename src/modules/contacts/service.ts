// Contacts CRUD (organizations:read|write): organisation-level or pinned to a site.
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { accessibleOrg, CONTACT, findInScope, findSite } from '../tenants/index.js';
import { type ContactPatch, type ContactRow, deleteContactRow, listContactRows, updateContactRow } from './repo.js';
type Row = ContactRow;
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
const cursor = z.object({ n: z.string(), id: z.uuid() });

export async function listContacts(
  db: Executor,
  p: Principal,
  q: { orgId: string; siteId?: string; limit: number; cursor?: string; search?: string },
) {
  await accessibleOrg(db, p, q.orgId);
  const after = decodeCursor(q.cursor, cursor);
  const rows = await listContactRows(db, {
    orgId: q.orgId,
    siteId: q.siteId,
    search: q.search,
    after,
    limit: q.limit,
  });
  const page = pageOf(rows, q.limit, (r) => ({ n: r.k, id: r.c.id }));
  return { data: page.data.map((r) => contactToJson(r.c)), nextCursor: page.nextCursor };
}

export async function findContact(db: Executor, p: Principal, id: string): Promise<Row> {
  return (await findInScope(db, p, CONTACT, id)).row;
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
      const row = await updateContactRow(tx, id, { ...patch, updatedAt: deps.clock.now() });
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
    if (isUniqueViolation(err))
      throw new AppError('conflict', 'Another contact of the organization has this externalId or previousId.');
    throw err;
  }
}

export async function deleteContact(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const current = await findContact(tx, p, id);
    await deleteContactRow(tx, id);
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
