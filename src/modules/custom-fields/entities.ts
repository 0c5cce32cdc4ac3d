// The entities custom-field values attach to, seen through the caller's scope: a device by the device visibility
// rules (site and device-group restrictions), a site by findSite, an organisation by accessibleOrg, a contact by
// findContact. Anything the caller cannot see is 404, as for the entity's own routes.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { principalOf } from '../../http/guards.js';
import { findContact } from '../contacts/index.js';
import { findDevice } from '../devices/index.js';
import { PERMISSIONS as PERMS, type PermissionKey } from '../../access/catalog.js';
import { hasPermission } from '../roles/index.js';
import { accessibleOrg, findSite } from '../tenants/index.js';
import { scopeOf, siteRestriction } from '../../access/scope.js';
import { contactKeys, siteNames, visibleDeviceHosts } from './repo.js';
import { ENTITY_TYPES, type EntityType } from './schemas.js';

/** Values are read with the entity's read permission and written with its write permission. */
export const ENTITY_PERMISSIONS: Record<EntityType, { read: PermissionKey; write: PermissionKey }> = {
  device: { read: PERMS.DEVICES_READ, write: PERMS.DEVICES_WRITE },
  site: { read: PERMS.SITES_READ, write: PERMS.SITES_WRITE },
  organization: { read: PERMS.ORGS_READ, write: PERMS.ORGS_WRITE },
  contact: { read: PERMS.ORGS_READ, write: PERMS.ORGS_WRITE },
};

/**
 * The permission depends on `entityType` in the query or body, so it is checked before schema validation
 * (403 forbidden before 400). An unknown entityType is left to the schema (400).
 */
export const requireEntityPermission = (action: 'read' | 'write', from: 'query' | 'body') =>
  async function requireEntityPermission(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const p = principalOf(req);
    if (!p.tenantKind) throw new AppError('tenant_context_required');
    const source = (from === 'query' ? req.query : req.body) as Record<string, unknown> | null | undefined;
    const type = source && typeof source === 'object' ? source.entityType : undefined;
    if (typeof type !== 'string' || !(ENTITY_TYPES as readonly string[]).includes(type)) return;
    const perm = ENTITY_PERMISSIONS[type as EntityType][action];
    if (!hasPermission(p.permissions, perm)) throw new AppError('forbidden', `Missing permission ${perm}.`);
  };

export interface EntityRef {
  id: string;
  orgId: string;
}

export async function resolveEntity(db: Executor, p: Principal, type: EntityType, id: string): Promise<EntityRef> {
  switch (type) {
    case 'device':
      return findDevice(db, p, id);
    case 'site':
      return findSite(db, p, id);
    case 'organization': {
      const org = await accessibleOrg(db, p, id);
      return { id: org.id, orgId: org.id };
    }
    case 'contact':
      return findContact(db, p, id);
  }
}

/** Ids of the visible entities of one organisation a CSV match value names (none, one, or several = ambiguous). */
export type Matcher = (value: string) => string[];

function indexBy<T>(rows: T[], key: (r: T) => string | null): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const r of rows) {
    const k = key(r);
    if (k === null) continue;
    const id = (r as { id: string }).id;
    const list = map.get(k);
    if (!list) map.set(k, [id]);
    else if (!list.includes(id)) list.push(id);
  }
  return map;
}

export async function entityMatcher(
  db: Executor,
  p: Principal,
  type: EntityType,
  org: { id: string; name: string; slug: string },
): Promise<Matcher> {
  switch (type) {
    case 'device': {
      const rows = await visibleDeviceHosts(db, org.id, scopeOf(p));
      const byHost = indexBy(rows, (r) => r.hostname.toLowerCase());
      return (v) => byHost.get(v.toLowerCase()) ?? [];
    }
    case 'site': {
      const allowed = siteRestriction(p);
      if (allowed && allowed.length === 0) return () => [];
      const rows = await siteNames(db, org.id, allowed);
      const byName = indexBy(rows, (r) => r.name.toLowerCase());
      return (v) => byName.get(v.toLowerCase()) ?? [];
    }
    case 'organization': {
      const names = new Set([org.name.toLowerCase(), org.slug.toLowerCase()]);
      return (v) => (names.has(v.toLowerCase()) ? [org.id] : []);
    }
    case 'contact': {
      const rows = await contactKeys(db, org.id);
      const byExternal = indexBy(rows, (r) => r.externalId);
      const byEmail = indexBy(rows, (r) => r.email?.toLowerCase() ?? null);
      return (v) => byExternal.get(v) ?? byEmail.get(v.toLowerCase()) ?? [];
    }
  }
}
