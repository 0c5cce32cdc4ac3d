// The customer tree: organisations, the partner record, sites and device groups.
// Each route: authenticate → permission → schema → handler (scope is applied in the queries).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { requireStepUp } from '../../http/step-up.js';
import { principalOf, requireFullOrgAccess, requirePermission, scopeIn } from '../../http/guards.js';
import { gettingStarted } from './getting-started.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import {
  createOrg,
  deleteOrg,
  getOrg,
  getPartner,
  listOrgs,
  orgEffectiveSettings,
  updateOrg,
  updatePartner,
} from './orgs-service.js';
import {
  createGroupBody,
  createOrgBody,
  createSiteBody,
  effectiveSettings,
  gettingStartedJson,
  groupJson,
  listQuery,
  orgJson,
  orgRequiredQuery,
  partnerJson,
  siteJson,
  updateGroupBody,
  updateOrgBody,
  updatePartnerBody,
  updateSiteBody,
} from './schemas.js';
import {
  createGroup,
  createSite,
  deleteGroup,
  deleteSite,
  findSite,
  getGroup,
  listGroups,
  listSites,
  siteToJson,
  updateGroup,
  updateSite,
} from './sites-service.js';

const ok = z.object({ success: z.literal(true) });

export function tenantRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const stepUpForSettings = requireStepUp(deps, {
      when: (req) => (req.body as { settings?: unknown }).settings !== undefined,
    });
    const can = requirePermission;
    const p = principalOf;

    r.get(
      '/orgs/organizations',
      {
        onRequest: [auth, can(PERMS.ORGS_READ)],
        schema: {
          tags: ['organizations'],
          summary: 'Organisations the caller may act on',
          querystring: listQuery.omit({ orgId: true }),
          response: { 200: page(orgJson), ...errors(400), ...authErrors },
        },
      },
      async (req) => listOrgs(deps.db, scopeIn(req), req.query),
    );
    r.post(
      '/orgs/organizations',
      {
        onRequest: [auth, can(PERMS.ORGS_WRITE)],
        schema: {
          tags: ['organizations'],
          summary: 'Create an organisation (one call per organisation)',
          body: createOrgBody,
          response: { 201: orgJson, ...errors(400, 409), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await createOrg(deps, p(req), req.body, metaOf(req))),
    );
    r.get(
      '/orgs/organizations/:id',
      {
        onRequest: [auth, can(PERMS.ORGS_READ)],
        schema: {
          tags: ['organizations'],
          summary: 'An organisation',
          params: idParam,
          response: { 200: orgJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => getOrg(deps.db, p(req), req.params.id),
    );
    r.patch(
      '/orgs/organizations/:id',
      {
        onRequest: [auth, can(PERMS.ORGS_WRITE)],
        preHandler: [stepUpForSettings],
        schema: {
          tags: ['organizations'],
          summary: 'Change name, slug, status or security settings',
          description:
            "Security settings include the organisation's IP allow-list (`security.ipAllowlist`: its members, and partner members acting in it); a list that leaves out your current address is 409 `ip_lockout` unless `confirmLockout: true`. The organisation's record and settings hold every site: a caller restricted to sites or device groups is 403 `permission_ceiling`.",
          params: idParam,
          body: updateOrgBody,
          response: { 200: orgJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => updateOrg(deps, p(req), req.params.id, req.body, metaOf(req)),
    );
    r.delete(
      '/orgs/organizations/:id',
      {
        onRequest: [auth, can(PERMS.ORGS_DELETE)],
        schema: {
          tags: ['organizations'],
          summary: 'Delete an organisation and everything in it',
          params: idParam,
          response: { 200: ok, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteOrg(deps, p(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );
    r.get(
      '/orgs/organizations/:id/effective-settings',
      {
        onRequest: [auth, can(PERMS.ORGS_READ)],
        schema: {
          tags: ['organizations'],
          summary: "Security settings in force: the partner's applied to the organisation, strictest wins",
          params: idParam,
          response: { 200: effectiveSettings, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => orgEffectiveSettings(deps.db, p(req), req.params.id),
    );

    r.get(
      '/orgs/partners/me',
      {
        onRequest: [auth, can(PERMS.ORGS_READ)],
        schema: {
          tags: ['organizations'],
          summary: "The caller's partner",
          response: { 200: partnerJson, ...authErrors },
        },
      },
      async (req) => getPartner(deps.db, p(req)),
    );
    r.patch(
      '/orgs/partners/me',
      {
        onRequest: [auth, can(PERMS.SETTINGS_WRITE)],
        preHandler: [stepUpForSettings],
        schema: {
          tags: ['organizations'],
          summary: 'Change the partner name or its security settings (apply to every organisation)',
          description:
            "Security settings include the IP allow-list of the partner's members (`security.ipAllowlist`; a list that leaves out your current address is 409 `ip_lockout` unless `confirmLockout: true`) and the break-glass account (`security.breakGlassUserId`, a partner member exempt from IP allow-lists, every use audited).",
          body: updatePartnerBody,
          response: { 200: partnerJson, ...errors(400, 409), ...authErrors },
        },
      },
      async (req) => updatePartner(deps, p(req), req.body, metaOf(req)),
    );
    r.get(
      '/orgs/partners/me/getting-started',
      {
        onRequest: [auth, requireFullOrgAccess(), can(PERMS.SETTINGS_WRITE)],
        schema: {
          tags: ['organizations'],
          operationId: 'getGettingStarted',
          summary: "A new partner's getting-started checklist, each step ticked from the partner's data",
          description:
            "For the partner's own administrators (full organisation access and settings:write; an organisation's member is 403). Each step is done when the data shows it: an organisation exists; a second member of staff (an invitation counts); two-step verification required for all staff; an active SSO provider for the staff; a device enrolled in any organisation; an active partner audit webhook.",
          response: { 200: gettingStartedJson, ...authErrors },
        },
      },
      async (req) => gettingStarted(deps.db, p(req)),
    );

    r.get(
      '/orgs/sites',
      {
        onRequest: [auth, can(PERMS.SITES_READ)],
        schema: {
          tags: ['sites'],
          summary: 'Sites of the organisations the caller may read',
          querystring: listQuery,
          response: { 200: page(siteJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listSites(deps.db, p(req), scopeIn(req), req.query),
    );
    r.post(
      '/orgs/sites',
      {
        onRequest: [auth, can(PERMS.SITES_WRITE)],
        schema: {
          tags: ['sites'],
          summary: 'Create a site (one call per site)',
          body: createSiteBody,
          response: { 201: siteJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await createSite(deps, p(req), req.body, metaOf(req))),
    );
    r.get(
      '/orgs/sites/:id',
      {
        onRequest: [auth, can(PERMS.SITES_READ)],
        schema: {
          tags: ['sites'],
          summary: 'A site',
          params: idParam,
          response: { 200: siteJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => siteToJson(await findSite(deps.db, p(req), req.params.id)),
    );
    r.patch(
      '/orgs/sites/:id',
      {
        onRequest: [auth, can(PERMS.SITES_WRITE)],
        schema: {
          tags: ['sites'],
          summary: 'Change a site',
          params: idParam,
          body: updateSiteBody,
          response: { 200: siteJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => updateSite(deps, p(req), req.params.id, req.body, metaOf(req)),
    );
    r.delete(
      '/orgs/sites/:id',
      {
        onRequest: [auth, can(PERMS.SITES_DELETE)],
        schema: {
          tags: ['sites'],
          summary: 'Delete a site without devices',
          params: idParam,
          response: { 200: ok, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => {
        await deleteSite(deps, p(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );

    r.get(
      '/device-groups',
      {
        onRequest: [auth, can(PERMS.SITES_READ)],
        schema: {
          tags: ['device groups'],
          summary: 'Device groups of an organisation',
          querystring: orgRequiredQuery,
          response: { 200: page(groupJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listGroups(deps.db, p(req), scopeIn(req), req.query),
    );
    r.post(
      '/device-groups',
      {
        onRequest: [auth, can(PERMS.SITES_WRITE)],
        schema: {
          tags: ['device groups'],
          summary: 'Create a device group',
          body: createGroupBody,
          response: { 201: groupJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await createGroup(deps, p(req), req.body, metaOf(req))),
    );
    r.get(
      '/device-groups/:id',
      {
        onRequest: [auth, can(PERMS.SITES_READ)],
        schema: {
          tags: ['device groups'],
          summary: 'A device group',
          params: idParam,
          response: { 200: groupJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => getGroup(deps.db, p(req), req.params.id),
    );
    r.patch(
      '/device-groups/:id',
      {
        onRequest: [auth, can(PERMS.SITES_WRITE)],
        schema: {
          tags: ['device groups'],
          summary: 'Change a device group',
          params: idParam,
          body: updateGroupBody,
          response: { 200: groupJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => updateGroup(deps, p(req), req.params.id, req.body, metaOf(req)),
    );
    r.delete(
      '/device-groups/:id',
      {
        onRequest: [auth, can(PERMS.SITES_DELETE)],
        schema: {
          tags: ['device groups'],
          summary: 'Delete a device group',
          params: idParam,
          response: { 200: ok, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteGroup(deps, p(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );
  };
}
