// SCIM 2.0 (RFC 7644) at /scim/v2, outside /api/v1 as identity providers expect. Every route: the SCIM bearer token
// (authenticateScim; nothing else is accepted here) → schema → handler, in the token's tenant. Bodies and answers are
// application/scim+json (application/json accepted too); errors use SCIM's error schema over the one catalogue.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { registerErrorFormat } from '../../http/error-handler.js';
import { depthLimitedJsonParser } from '../../http/input-limits.js';
import { metaOf } from '../../http/meta.js';
import { makeScimAuthenticate, scimCallerOf } from './context.js';
import { discoveryJson, listOf, resourceTypes, schemas as scimSchemas, serviceProviderConfig } from './discovery.js';
import { SCIM_MEDIA_TYPE, scimErrorFormat, scimErrors } from './errors.js';
import { createGroup, deleteGroup, getGroup, listGroups, patchGroup, replaceGroup } from './groups-service.js';
import {
  getQuery,
  listQuery,
  listResponse,
  patchBody,
  resourceId,
  scimGroupInput,
  scimGroupJson,
  scimUserInput,
  scimUserJson,
} from './schemas.js';
import { createUser, deleteUser, getUser, listUsers, patchUser, replaceUser } from './users-service.js';
import { project } from './common.js';
import { USER_SCHEMA } from './schemas.js';

export const SCIM_PREFIX = '/scim/v2';

const MEDIA = [SCIM_MEDIA_TYPE, 'application/json'];
const AUTH =
  'Needs a SCIM bearer token (`Authorization: Bearer ghscim_…`, from POST /api/v1/scim-tokens); the tenant is the token’s. Anything else, or a revoked token, is 401.';
const ETAG = 'The answer carries `ETag` (= meta.version); with `If-Match` a stale version is 412.';
const read = scimErrors(400, 401, 404, 500, 503);
const write = scimErrors(400, 401, 403, 404, 409, 412, 413, 415, 500, 503);
const noContent = z.null().describe('Deleted; no content.');

/** SCIM's media type unless the client asked for plain JSON only. */
function answerType(req: FastifyRequest): string {
  const accept = String(req.headers.accept ?? '');
  return /application\/json/i.test(accept) && !/application\/scim\+json/i.test(accept)
    ? 'application/json'
    : SCIM_MEDIA_TYPE;
}

const withEtag = <T extends { meta?: { version: string } }>(reply: FastifyReply, resource: T) => {
  if (resource.meta) reply.header('etag', resource.meta.version);
  return resource;
};

export function scimRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    registerErrorFormat(SCIM_PREFIX, scimErrorFormat);
    app.decorateRequest('scim', null);
    app.addContentTypeParser(SCIM_MEDIA_TYPE, { parseAs: 'string' }, depthLimitedJsonParser(app));
    app.addHook('onSend', async (req, reply, payload) => {
      if (reply.statusCode < 400 && String(reply.getHeader('content-type') ?? '').startsWith('application/json'))
        reply.type(answerType(req));
      reply.header('cache-control', 'no-store');
      return payload;
    });
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = makeScimAuthenticate(deps);
    const base = { tags: ['scim'], security: [{ scimBearer: [] }], produces: MEDIA };
    const withBody = { ...base, consumes: MEDIA };
    const c = scimCallerOf;
    const url = deps.config.publicUrl;

    // Discovery
    r.get(
      '/ServiceProviderConfig',
      {
        onRequest: [auth],
        schema: {
          ...base,
          operationId: 'scimServiceProviderConfig',
          summary: 'SCIM service provider configuration',
          description: `PATCH, filter (at most 200 results a page) and ETags are supported; bulk, sort and password change are not. ${AUTH}`,
          response: { 200: discoveryJson, ...scimErrors(401, 500, 503) },
        },
      },
      async () => serviceProviderConfig(url),
    );
    r.get(
      '/ResourceTypes',
      {
        onRequest: [auth],
        schema: {
          ...base,
          operationId: 'scimResourceTypes',
          summary: 'SCIM resource types (User, Group)',
          description: `A ListResponse. ${AUTH}`,
          response: { 200: discoveryJson, ...scimErrors(401, 500, 503) },
        },
      },
      async () => listOf(resourceTypes(url)),
    );
    r.get(
      '/Schemas',
      {
        onRequest: [auth],
        schema: {
          ...base,
          operationId: 'scimSchemas',
          summary: 'SCIM schemas (User, Group, Gatehouse Group extension)',
          description: `A ListResponse of the attributes this service provider keeps; others are accepted and ignored. ${AUTH}`,
          response: { 200: discoveryJson, ...scimErrors(401, 500, 503) },
        },
      },
      async () => listOf(scimSchemas(url)),
    );

    // Users
    r.get(
      '/Users',
      {
        onRequest: [auth],
        schema: {
          ...base,
          operationId: 'scimListUsers',
          summary: 'List or filter SCIM users',
          description: `\`filter\` (RFC 7644 3.4.2.2) is translated to SQL (400 invalidFilter when it cannot be read or names an attribute that cannot be filtered); \`startIndex\` (1-based) and \`count\` (at most 200) page it. ${AUTH}`,
          querystring: listQuery,
          response: { 200: listResponse(scimUserJson, 'ScimUserList'), ...read },
        },
      },
      async (req) => listUsers(deps, c(req), req.query),
    );
    r.post(
      '/Users',
      {
        onRequest: [auth],
        schema: {
          ...withBody,
          operationId: 'scimCreateUser',
          summary: 'Provision a user',
          description: `The user becomes a member of the tenant with the token’s default role (or a mapped group’s). A new account is invited by mail to set a password unless the token was made with sendInvitations false (SSO only); an existing account with the e-mail is linked. A repeated create (same userName or externalId) is 409 uniqueness: look the user up with a filter. Unknown attributes (a password among them) are ignored. ${ETAG} ${AUTH}`,
          body: scimUserInput,
          response: { 201: scimUserJson, ...write },
        },
      },
      async (req, reply) => {
        const user = await createUser(deps, c(req), req.body, metaOf(req));
        return reply.code(201).header('location', user.meta.location).send(withEtag(reply, user));
      },
    );
    r.get(
      '/Users/:id',
      {
        onRequest: [auth],
        schema: {
          ...base,
          operationId: 'scimGetUser',
          summary: 'A SCIM user',
          description: `${ETAG} ${AUTH}`,
          params: resourceId,
          querystring: getQuery,
          response: { 200: scimUserJson, ...read },
        },
      },
      async (req, reply) =>
        project(withEtag(reply, await getUser(deps, c(req), req.params.id)), req.query, USER_SCHEMA),
    );
    r.put(
      '/Users/:id',
      {
        onRequest: [auth],
        schema: {
          ...withBody,
          operationId: 'scimReplaceUser',
          summary: 'Replace a SCIM user',
          description: `Replaces userName, externalId, name, displayName, emails and active. \`active: false\` suspends the membership and revokes the user’s sessions in this tenant at once. ${ETAG} ${AUTH}`,
          params: resourceId,
          body: scimUserInput,
          response: { 200: scimUserJson, ...write },
        },
      },
      async (req, reply) =>
        withEtag(reply, await replaceUser(deps, c(req), req.params.id, req.body, req.headers['if-match'], metaOf(req))),
    );
    r.patch(
      '/Users/:id',
      {
        onRequest: [auth],
        schema: {
          ...withBody,
          operationId: 'scimPatchUser',
          summary: 'Patch a SCIM user',
          description: `RFC 7644 3.5.2 operations (add, remove, replace, any case; a path, or none with an object of attributes), as Entra ID and Okta send them; "True"/"False" strings are booleans. \`active: false\` suspends the membership and revokes the user’s sessions here at once. ${ETAG} ${AUTH}`,
          params: resourceId,
          body: patchBody,
          response: { 200: scimUserJson, ...write },
        },
      },
      async (req, reply) =>
        withEtag(reply, await patchUser(deps, c(req), req.params.id, req.body, req.headers['if-match'], metaOf(req))),
    );
    r.delete(
      '/Users/:id',
      {
        onRequest: [auth],
        schema: {
          ...base,
          operationId: 'scimDeleteUser',
          summary: 'Deprovision a SCIM user',
          description: `Ends the membership and the user’s sessions in this tenant; an account SCIM made that belongs nowhere else is deleted. ${ETAG} ${AUTH}`,
          params: resourceId,
          response: { 204: noContent, ...scimErrors(400, 401, 404, 412, 500, 503) },
        },
      },
      async (req, reply) => {
        await deleteUser(deps, c(req), req.params.id, req.headers['if-match'], metaOf(req));
        return reply.code(204).send(null);
      },
    );

    // Groups
    const groupRule =
      'A group maps to a role of the tenant with the extension attribute `urn:gatehouse:params:scim:schemas:extension:2.0:Group:roleId`; its members then hold that role (within the token creator’s permissions: 403 permission_ceiling; never *:*).';
    r.get(
      '/Groups',
      {
        onRequest: [auth],
        schema: {
          ...base,
          operationId: 'scimListGroups',
          summary: 'List or filter SCIM groups',
          description: `\`filter\` on displayName, externalId, id, members.value; \`excludedAttributes=members\` leaves members out. ${AUTH}`,
          querystring: listQuery,
          response: { 200: listResponse(scimGroupJson, 'ScimGroupList'), ...read },
        },
      },
      async (req) => listGroups(deps, c(req), req.query),
    );
    r.post(
      '/Groups',
      {
        onRequest: [auth],
        schema: {
          ...withBody,
          operationId: 'scimCreateGroup',
          summary: 'Create a SCIM group',
          description: `${groupRule} displayName is unique in the tenant (409 uniqueness). ${ETAG} ${AUTH}`,
          body: scimGroupInput,
          response: { 201: scimGroupJson, ...write },
        },
      },
      async (req, reply) => {
        const group = await createGroup(deps, c(req), req.body, metaOf(req));
        return reply.code(201).header('location', group.meta.location).send(withEtag(reply, group));
      },
    );
    r.get(
      '/Groups/:id',
      {
        onRequest: [auth],
        schema: {
          ...base,
          operationId: 'scimGetGroup',
          summary: 'A SCIM group',
          description: `${ETAG} ${AUTH}`,
          params: resourceId,
          querystring: getQuery,
          response: { 200: scimGroupJson, ...read },
        },
      },
      async (req, reply) => withEtag(reply, await getGroup(deps, c(req), req.params.id, req.query)),
    );
    r.put(
      '/Groups/:id',
      {
        onRequest: [auth],
        schema: {
          ...withBody,
          operationId: 'scimReplaceGroup',
          summary: 'Replace a SCIM group',
          description: `${groupRule} Without the extension the mapping stays. ${ETAG} ${AUTH}`,
          params: resourceId,
          body: scimGroupInput,
          response: { 200: scimGroupJson, ...write },
        },
      },
      async (req, reply) =>
        withEtag(
          reply,
          await replaceGroup(deps, c(req), req.params.id, req.body, req.headers['if-match'], metaOf(req)),
        ),
    );
    r.patch(
      '/Groups/:id',
      {
        onRequest: [auth],
        schema: {
          ...withBody,
          operationId: 'scimPatchGroup',
          summary: 'Patch a SCIM group (members, name, role mapping)',
          description: `Adds and removes members (\`members[value eq "…"]\` paths and Entra ID’s remove with a value list both work). ${groupRule} ${ETAG} ${AUTH}`,
          params: resourceId,
          body: patchBody,
          response: { 200: scimGroupJson, ...write },
        },
      },
      async (req, reply) =>
        withEtag(reply, await patchGroup(deps, c(req), req.params.id, req.body, req.headers['if-match'], metaOf(req))),
    );
    r.delete(
      '/Groups/:id',
      {
        onRequest: [auth],
        schema: {
          ...base,
          operationId: 'scimDeleteGroup',
          summary: 'Delete a SCIM group',
          description: `Members of a mapped group fall back to their default role (or another mapped group’s). ${ETAG} ${AUTH}`,
          params: resourceId,
          response: { 204: noContent, ...scimErrors(400, 401, 404, 412, 500, 503) },
        },
      },
      async (req, reply) => {
        await deleteGroup(deps, c(req), req.params.id, req.headers['if-match'], metaOf(req));
        return reply.code(204).send(null);
      },
    );
  };
}
