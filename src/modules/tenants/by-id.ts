// The one rule for a resource addressed by id: the record's own tenant decides, never a query parameter. A
// caller reaches the record when its scope covers the record's organisation (and site and device group, for a
// restricted organisation member); anything else is 404 `not_found`. `?orgId=` stays accepted on every such route and
// must agree with the record. The /users and /roles routes keep their own rule: the id is looked up in the target
// scope (`?orgId=` or the caller's own).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Executor } from '../../db/connect.js';
import type { Target } from '../../db/tenant-filter.js';
import type { Principal } from '../../http/context.js';
import { notFound } from '../../http/errors.js';
import { mayAccessOrg, scopeReasons } from '../../access/decision.js';
import { refusalOf } from '../../http/refusal.js';
import {
  contactWithPartner,
  deviceWithPartner,
  domainById,
  enrollmentKeyWithPartner,
  groupIdsOfDevice,
  groupWithPartner,
  organizationById,
  PARTNER_WIDE,
  partnerWideById,
  scimTokenById,
  serviceAccountById,
  siteWithPartner,
  ssoProviderById,
  webhookById,
  type ContactRow,
  type DeviceRow,
  type DomainRow,
  type EnrollmentKeyRow,
  type GroupRow,
  type OrganizationRow,
  type PartnerWideTable,
  type ScimTokenRow,
  type ServiceAccountRow,
  type SiteRow,
  type SsoProviderRow,
  type WebhookRow,
} from './repo.js';
import { partnerOrgIds } from './target.js';

/** Where a record lives. `siteId`/`groupIds` undefined: no site or device-group rule applies to this kind. */
export interface RecordOwner {
  partnerId: string;
  /** null: a partner-owned record. */
  orgId: string | null;
  siteId?: string | null;
  groupIds?: string[];
}

export interface ByIdResource<R> {
  /** For the 404 message. */
  what: string;
  /** Partner-owned records: `shared` ones (partner-wide configuration) are in force in every organisation. */
  partnerOwned: 'shared' | 'partner-only' | 'never';
  /** A record without a site: visible to a site-restricted member (`visible`) or not. */
  siteless: 'visible' | 'hidden';
  load(db: Executor, id: string): Promise<{ row: R; owner: RecordOwner } | null>;
  /** The record is a device: a destructive action on it counts against the devices budget. */
  isDevice?: boolean;
}

/** Whether the caller's scope covers the record (the pure half of the rule). */
export function covers(
  p: Principal,
  o: RecordOwner,
  partnerOwned: ByIdResource<unknown>['partnerOwned'],
  siteless: 'visible' | 'hidden',
): boolean {
  // The record's partner comes from the database, so a partner with orgAccess `all` covers all of its organisations.
  return scopeReasons(p, o, partnerOwned, siteless).every((r) => r.allowed);
}

/**
 * The record, when the caller's scope covers it and `orgIdQuery` (if given) agrees with it, with the tenant it belongs
 * to. Everything else is the same 404, so an id outside the scope says nothing about whether it exists.
 */
export async function findInScope<R>(
  db: Executor,
  p: Principal,
  res: ByIdResource<R>,
  id: string,
  orgIdQuery?: string,
): Promise<{ row: R; target: Target }> {
  const found = await res.load(db, id);
  if (!found) throw notFound(res.what);
  const refusal = refusalOf(scopeReasons(p, found.owner, res.partnerOwned, res.siteless), res.what);
  if (refusal) throw refusal;
  const { owner } = found;
  // A destructive action on the record is charged to the caller's blast-radius budgets (the last step of the decision).
  const budget = await p.governor?.charge(db, p, p.asked ?? [], {
    orgId: owner.orgId,
    deviceIds: res.isDevice ? [id] : [],
  });
  const over = budget && refusalOf([budget], res.what);
  if (over) throw over;
  if (orgIdQuery !== undefined && orgIdQuery !== owner.orgId) {
    // A partner-wide record is in force in each organisation the caller may act on: naming one of those agrees.
    const inForce =
      owner.orgId === null &&
      res.partnerOwned === 'shared' &&
      mayAccessOrg(p, orgIdQuery) &&
      (await partnerOrgIds(db, owner.partnerId, [orgIdQuery])).size === 1;
    if (!inForce) throw notFound(res.what);
  }
  const target: Target = owner.orgId
    ? { kind: 'organization', partnerId: owner.partnerId, orgId: owner.orgId }
    : { kind: 'partner', partnerId: owner.partnerId, orgId: null };
  return { row: found.row, target };
}

/** A record of a table with an org_id column (its partner is the organisation's). */
function orgOwned<R>(
  load: (db: Executor, id: string) => Promise<{ row: R; partnerId: string } | undefined>,
  owner: (row: R) => Omit<RecordOwner, 'partnerId'>,
) {
  return async (db: Executor, id: string) => {
    const hit = await load(db, id);
    return hit ? { row: hit.row, owner: { partnerId: hit.partnerId, ...owner(hit.row) } } : null;
  };
}

export const ORGANIZATION: ByIdResource<OrganizationRow> = {
  what: 'organization',
  partnerOwned: 'never',
  siteless: 'visible',
  load: async (db, id) => {
    const row = await organizationById(db, id);
    return row ? { row, owner: { partnerId: row.partnerId, orgId: row.id } } : null;
  },
};

export const SITE: ByIdResource<SiteRow> = {
  what: 'site',
  partnerOwned: 'never',
  siteless: 'hidden',
  load: orgOwned(siteWithPartner, (r) => ({ orgId: r.orgId, siteId: r.id })),
};

export const DEVICE_GROUP: ByIdResource<GroupRow> = {
  what: 'device group',
  partnerOwned: 'never',
  siteless: 'visible',
  load: orgOwned(groupWithPartner, (r) => ({ orgId: r.orgId, siteId: r.siteId, groupIds: [r.id] })),
};

export const DEVICE: ByIdResource<DeviceRow> = {
  what: 'device',
  isDevice: true,
  partnerOwned: 'never',
  siteless: 'hidden',
  load: async (db, id) => {
    const hit = await deviceWithPartner(db, id);
    if (!hit) return null;
    const groupIds = await groupIdsOfDevice(db, id);
    return {
      row: hit.row,
      owner: { partnerId: hit.partnerId, orgId: hit.row.orgId, siteId: hit.row.siteId, groupIds },
    };
  },
};

export const ENROLLMENT_KEY: ByIdResource<EnrollmentKeyRow> = {
  what: 'enrollment key',
  partnerOwned: 'never',
  siteless: 'hidden',
  load: orgOwned(enrollmentKeyWithPartner, (r) => ({ orgId: r.orgId, siteId: r.siteId })),
};

export const CONTACT: ByIdResource<ContactRow> = {
  what: 'contact',
  partnerOwned: 'never',
  siteless: 'visible',
  // Contacts are the organisation's address book: no site rule (site restrictions cover devices, sites and keys).
  load: orgOwned(contactWithPartner, (r) => ({ orgId: r.orgId })),
};

/** Tables with partner_id and a nullable org_id (partner-wide configuration). */
function partnerWide<T extends PartnerWideTable>(table: T, what: string): ByIdResource<T['$inferSelect']> {
  return {
    what,
    partnerOwned: 'shared',
    siteless: 'visible',
    load: async (db, id) => {
      const row = await partnerWideById(db, table, id);
      return row ? { row, owner: { partnerId: row.partnerId, orgId: row.orgId } } : null;
    },
  };
}
export const SCRIPT = partnerWide(PARTNER_WIDE.scripts, 'script');
export const CUSTOM_FIELD = partnerWide(PARTNER_WIDE.customFieldDefinitions, 'custom field');
export const CONFIG_ITEM = partnerWide(PARTNER_WIDE.configItems, 'configuration item');

export const SSO_PROVIDER: ByIdResource<SsoProviderRow> = {
  what: 'SSO provider',
  // A partner-owned provider signs in the partner's own users: not an organisation's to see.
  partnerOwned: 'partner-only',
  siteless: 'visible',
  load: async (db, id) => {
    const row = await ssoProviderById(db, id);
    return row ? { row, owner: { partnerId: row.partnerId, orgId: row.orgId } } : null;
  },
};

export const DOMAIN: ByIdResource<DomainRow> = {
  what: 'domain',
  // A partner's own domain routes its staff's sign-in: not an organisation's to see.
  partnerOwned: 'partner-only',
  siteless: 'visible',
  load: async (db, id) => {
    const row = await domainById(db, id);
    return row ? { row, owner: { partnerId: row.partnerId, orgId: row.orgId } } : null;
  },
};

export const WEBHOOK: ByIdResource<WebhookRow> = {
  what: 'webhook',
  // A partner-wide subscription carries every organisation's events: not an organisation's to see.
  partnerOwned: 'partner-only',
  siteless: 'visible',
  load: async (db, id) => {
    const row = await webhookById(db, id);
    return row ? { row, owner: { partnerId: row.partnerId, orgId: row.orgId } } : null;
  },
};

export const SERVICE_ACCOUNT: ByIdResource<ServiceAccountRow> = {
  what: 'service account',
  // A partner's own service account acts across its organisations: not an organisation's to see.
  partnerOwned: 'partner-only',
  // It is organisation-wide: a site-restricted member sees it, and is refused changing it (a ceiling rule).
  siteless: 'visible',
  load: async (db, id) => {
    const row = await serviceAccountById(db, id);
    return row ? { row, owner: { partnerId: row.partnerId, orgId: row.orgId } } : null;
  },
};

export const SCIM_TOKEN: ByIdResource<ScimTokenRow> = {
  what: 'SCIM token',
  // A partner's token provisions the partner's own staff: not an organisation's to see.
  partnerOwned: 'partner-only',
  siteless: 'visible',
  load: async (db, id) => {
    const row = await scimTokenById(db, id);
    return row ? { row, owner: { partnerId: row.partnerId, orgId: row.orgId } } : null;
  },
};

/** Every `:id` route family under /api/v1 and the resource its id names (the /users and /roles ones excepted). */
export const BY_ID_ROUTES: [prefix: string, resource: ByIdResource<unknown>][] = [
  ['/orgs/organizations/:id', ORGANIZATION],
  ['/orgs/sites/:id', SITE],
  ['/device-groups/:id', DEVICE_GROUP],
  ['/devices/:id', DEVICE],
  ['/enrollment-keys/:id', ENROLLMENT_KEY],
  ['/contacts/:id', CONTACT],
  ['/scripts/:id', SCRIPT],
  ['/custom-fields/:id', CUSTOM_FIELD],
  ['/config-items/:id', CONFIG_ITEM],
  ['/sso/providers/:id', SSO_PROVIDER],
  ['/service-accounts/:id', SERVICE_ACCOUNT],
  ['/webhooks/:id', WEBHOOK],
  ['/scim-tokens/:id', SCIM_TOKEN],
  ['/domains/:id', DOMAIN],
] as [string, ByIdResource<unknown>][];

export const byIdQuery = z.strictObject({
  orgId: z
    .uuid()
    .optional()
    .describe(
      'Optional: must name the organisation the record belongs to (or, for partner-wide configuration, one it is in force in)',
    ),
});

const resourceOf = (url: string, prefix: string) =>
  BY_ID_ROUTES.find(([path]) => url === `${prefix}${path}` || url.startsWith(`${prefix}${path}/`))?.[1];

/**
 * Gives every `:id` route of the table the optional `?orgId=` (declared, so it is validated and documented) and checks
 * it against the record after the route's guards: the route's own find, through findInScope, applies the rest.
 */
export function installByIdScope(app: FastifyInstance, db: Executor, prefix: string): void {
  app.addHook('onRoute', (route) => {
    const resource = resourceOf(route.url, prefix);
    if (!resource) return;
    route.schema = { ...route.schema, querystring: route.schema?.querystring ?? byIdQuery };
    const check = async (req: FastifyRequest) => {
      const orgId = (req.query as { orgId?: string } | undefined)?.orgId;
      const id = (req.params as { id?: string }).id;
      if (orgId !== undefined && id && req.auth) await findInScope(db, req.auth, resource, id, orgId);
    };
    route.preHandler = [...[route.preHandler ?? []].flat(), check];
  });
}
