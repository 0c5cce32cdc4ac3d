// Custom fields: definitions and the import wizard (settings:read|write), values (the entity's own permission).
// Each route: authenticate → permission → schema → handler. The value routes check the permission of the entity
// type named in the request before its schema (preValidation), so a refusal still comes before a 400.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf, requirePermission, requireTenant } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { requireEntityPermission } from './entities.js';
import { commitImport, previewImport } from './import-service.js';
import {
  commitJson,
  createDefinitionBody,
  definitionJson,
  definitionListQuery,
  importBody,
  MATCH_DOC,
  MAX_IMPORT_CSV_BYTES,
  previewJson,
  putValuesBody,
  updateDefinitionBody,
  valuesJson,
  valuesQuery,
} from './schemas.js';
import {
  createDefinition,
  definitionToJson,
  deleteDefinition,
  findDefinition,
  listDefinitions,
  updateDefinition,
} from './service.js';
import { getValues, putValues } from './values-service.js';

const ok = z.object({ success: z.literal(true) });
const OWNERSHIP =
  'Partner-wide definitions are created, changed and deleted only by partner users with orgAccess all (403 full_org_access_required). A key is unique per entity type among the definitions in force in an organisation (409 conflict).';
const VALUE_PERMS =
  'Needs the read (GET) or write (PUT) permission of the entity: devices:* for device, sites:* for site, organizations:* for organization and contact.';
const IMPORT_BODY_LIMIT = 2 * MAX_IMPORT_CSV_BYTES + 64 * 1024;

export function customFieldRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const can = requirePermission;
    const entityCan = requireEntityPermission;
    const p = principalOf;

    r.get(
      '/custom-fields',
      {
        onRequest: [auth, can(PERMS.SETTINGS_READ)],
        schema: {
          tags: ['custom fields'],
          summary: "Definitions in force: partner-wide, plus the organisation's own when one is named",
          description: 'Each definition carries source: partner | organization.',
          querystring: definitionListQuery,
          response: { 200: page(definitionJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listDefinitions(deps.db, p(req), req.query),
    );
    r.post(
      '/custom-fields',
      {
        onRequest: [auth, can(PERMS.SETTINGS_WRITE)],
        schema: {
          tags: ['custom fields'],
          summary: 'Define a custom field',
          description: OWNERSHIP,
          body: createDefinitionBody,
          response: { 201: definitionJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await createDefinition(deps, p(req), req.body, metaOf(req))),
    );

    r.get(
      '/custom-fields/values',
      {
        onRequest: [auth, requireTenant()],
        preValidation: [entityCan('read', 'query')],
        schema: {
          tags: ['custom fields'],
          summary: 'Values of one entity',
          description: VALUE_PERMS,
          querystring: valuesQuery,
          response: { 200: valuesJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => getValues(deps.db, p(req), req.query),
    );
    r.put(
      '/custom-fields/values',
      {
        onRequest: [auth, requireTenant()],
        preValidation: [entityCan('write', 'body')],
        schema: {
          tags: ['custom fields'],
          summary: 'Set (or, with null, clear) values of one entity; answers all its values',
          description: VALUE_PERMS,
          body: putValuesBody,
          response: { 200: valuesJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => putValues(deps, p(req), req.body, metaOf(req)),
    );

    r.post(
      '/custom-fields/import/preview',
      {
        onRequest: [auth, can(PERMS.SETTINGS_READ)],
        preValidation: [entityCan('read', 'body')],
        bodyLimit: IMPORT_BODY_LIMIT,
        schema: {
          tags: ['custom fields'],
          summary: 'Import wizard: match and check every row, write nothing',
          description: `${MATCH_DOC} Also needs the entity's read permission.`,
          body: importBody,
          response: { 200: previewJson, ...errors(400, 404, 413), ...authErrors },
        },
      },
      async (req) => previewImport(deps, p(req), req.body),
    );
    r.post(
      '/custom-fields/import/commit',
      {
        onRequest: [auth, can(PERMS.SETTINGS_WRITE)],
        preValidation: [entityCan('write', 'body')],
        bodyLimit: IMPORT_BODY_LIMIT,
        schema: {
          tags: ['custom fields'],
          summary: 'Import wizard: write every valid row in one transaction (empty cells leave values unchanged)',
          description: `${MATCH_DOC} Also needs the entity's write permission.`,
          body: importBody,
          response: { 200: commitJson, ...errors(400, 404, 413), ...authErrors },
        },
      },
      async (req) => commitImport(deps, p(req), req.body, metaOf(req)),
    );

    r.get(
      '/custom-fields/:id',
      {
        onRequest: [auth, can(PERMS.SETTINGS_READ)],
        schema: {
          tags: ['custom fields'],
          summary: 'A custom-field definition',
          params: idParam,
          response: { 200: definitionJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => definitionToJson(await findDefinition(deps.db, p(req), req.params.id)),
    );
    r.patch(
      '/custom-fields/:id',
      {
        onRequest: [auth, can(PERMS.SETTINGS_WRITE)],
        schema: {
          tags: ['custom fields'],
          summary: 'Rename, or change the options of a select field',
          description: OWNERSHIP,
          params: idParam,
          body: updateDefinitionBody,
          response: { 200: definitionJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => updateDefinition(deps, p(req), req.params.id, req.body, metaOf(req)),
    );
    r.delete(
      '/custom-fields/:id',
      {
        onRequest: [auth, can(PERMS.SETTINGS_WRITE)],
        schema: {
          tags: ['custom fields'],
          summary: 'Delete a definition and its values',
          description: OWNERSHIP,
          params: idParam,
          response: { 200: ok, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteDefinition(deps, p(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );
  };
}
