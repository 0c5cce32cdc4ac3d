// Devices (devices:*), enrollment keys (devices:*) and the public agent endpoints.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { requireStepUp } from '../../http/step-up.js';
import { bearerToken } from '../../http/authenticate.js';
import { principalOf, requirePermission, scopeIn } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import {
  createdKey,
  createKey,
  createKeyBody,
  deleteKey,
  enroll,
  enrollBody,
  enrollResponse,
  findKey,
  inventoryBody,
  keyJson,
  keyListQuery,
  keyToJson,
  listKeys,
  reportInventory,
} from '../enrollment/index.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import {
  addDevicesBody,
  deviceDetail,
  deviceJson,
  deviceListQuery,
  movedDevices,
  moveDevicesBody,
  updateDeviceBody,
} from './schemas.js';
import { addDevicesToGroup, deleteDevice, getDevice, listDevices, moveDevices, updateDevice } from './service.js';

const ok = z.object({ success: z.literal(true) });

export function deviceRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const can = requirePermission;
    const p = principalOf;

    r.get(
      '/devices',
      {
        onRequest: [auth, can(PERMS.DEVICES_READ)],
        schema: {
          tags: ['devices'],
          summary: 'Devices the caller may see (site and device-group restrictions apply)',
          querystring: deviceListQuery,
          response: { 200: page(deviceJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listDevices(deps.db, p(req), scopeIn(req), req.query),
    );
    r.post(
      '/devices/move',
      {
        onRequest: [auth, can(PERMS.DEVICES_WRITE)],
        schema: {
          tags: ['devices'],
          summary: 'Move devices to a site or a device group, in bulk',
          description:
            'All the devices and the target must be of one organisation the caller may reach; any other id refuses the whole move.',
          body: moveDevicesBody,
          response: { 200: movedDevices, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => moveDevices(deps, p(req), req.body, metaOf(req)),
    );
    r.get(
      '/devices/:id',
      {
        onRequest: [auth, can(PERMS.DEVICES_READ)],
        schema: {
          tags: ['devices'],
          summary: 'A device with its last reported inventory and patch state',
          params: idParam,
          response: { 200: deviceDetail, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => getDevice(deps.db, p(req), req.params.id),
    );
    r.patch(
      '/devices/:id',
      {
        onRequest: [auth, can(PERMS.DEVICES_WRITE)],
        schema: {
          tags: ['devices'],
          summary: 'Rename, move to a site, set device groups',
          params: idParam,
          body: updateDeviceBody,
          response: { 200: deviceDetail, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => updateDevice(deps, p(req), req.params.id, req.body, metaOf(req)),
    );
    r.delete(
      '/devices/:id',
      {
        onRequest: [auth, can(PERMS.DEVICES_DELETE)],
        schema: {
          tags: ['devices'],
          summary: 'Remove a device (its agent token stops working)',
          params: idParam,
          response: { 200: ok, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteDevice(deps, p(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );

    r.post(
      '/enrollment-keys',
      {
        onRequest: [auth, can(PERMS.DEVICES_WRITE)],
        preHandler: [requireStepUp(deps)],
        schema: {
          tags: ['enrollment'],
          summary: 'Create a key (maxUsage 1 and 60 minutes unless given); the key is shown once',
          body: createKeyBody,
          response: { 201: createdKey, ...errors(400, 404), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await createKey(deps, p(req), req.body, metaOf(req))),
    );
    r.get(
      '/enrollment-keys',
      {
        onRequest: [auth, can(PERMS.DEVICES_READ)],
        schema: {
          tags: ['enrollment'],
          summary: 'Enrollment keys (never the key itself)',
          querystring: keyListQuery,
          response: { 200: page(keyJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listKeys(deps.db, p(req), scopeIn(req), req.query),
    );
    r.get(
      '/enrollment-keys/:id',
      {
        onRequest: [auth, can(PERMS.DEVICES_READ)],
        schema: {
          tags: ['enrollment'],
          summary: 'An enrollment key (never the key itself)',
          params: idParam,
          response: { 200: keyJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => keyToJson(await findKey(deps.db, p(req), req.params.id)),
    );
    r.delete(
      '/enrollment-keys/:id',
      {
        onRequest: [auth, can(PERMS.DEVICES_WRITE)],
        schema: {
          tags: ['enrollment'],
          summary: 'Revoke a key',
          params: idParam,
          response: { 200: ok, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteKey(deps, p(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );

    r.post(
      '/agents/enroll',
      {
        onRequest: [deps.limits.guard('enroll', (req) => req.ip)],
        schema: {
          tags: ['agents'],
          summary: 'Enrol a device with a key',
          security: [],
          body: enrollBody,
          response: { 201: enrollResponse, ...errors(400, 401, 429) },
        },
      },
      async (req, reply) => reply.code(201).send(await enroll(deps, req.body, metaOf(req))),
    );
    r.post(
      '/agents/inventory',
      {
        bodyLimit: 16 * 1024 * 1024,
        schema: {
          tags: ['agents'],
          summary: "Report inventory and patch state (replaces the device's previous report)",
          security: [{ agentToken: [] }],
          body: inventoryBody,
          response: {
            200: z.object({ success: z.literal(true), deviceId: z.uuid(), software: z.number(), patches: z.number() }),
            ...errors(400, 401, 413),
          },
        },
      },
      async (req) => reportInventory(deps, bearerToken(req), req.body),
    );
    // Adding devices to a device group is a change to the devices (their group), so it is the devices module's route.
    r.post(
      '/device-groups/:id/devices',
      {
        onRequest: [auth, can(PERMS.DEVICES_WRITE)],
        schema: {
          tags: ['device groups'],
          summary: 'Add devices to the group',
          params: idParam,
          body: addDevicesBody,
          response: { 200: ok, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await addDevicesToGroup(deps, p(req), req.params.id, req.body.deviceIds, metaOf(req));
        return { success: true as const };
      },
    );
  };
}
