import { z } from 'zod';

export const deviceJson = z
  .object({
    id: z.uuid(),
    orgId: z.uuid(),
    siteId: z.uuid(),
    hostname: z.string(),
    displayName: z.string().nullable(),
    osType: z.string(),
    osVersion: z.string().nullable(),
    agentVersion: z.string().nullable(),
    deviceGroupIds: z.array(z.uuid()),
    enrolledAt: z.string(),
    lastSeenAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Device' });
export const deviceDetail = deviceJson.extend({
  inventory: z
    .object({
      hardware: z.record(z.string(), z.unknown()),
      software: z.array(z.unknown()),
      patches: z.array(z.unknown()),
      reportedAt: z.string(),
    })
    .nullable(),
});
export const deviceListQuery = z.strictObject({
  orgId: z.uuid().optional(),
  siteId: z.uuid().optional(),
  deviceGroupId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: z.string().max(255).optional(),
});
export const updateDeviceBody = z
  .strictObject({
    name: z.string().trim().min(1).max(255).nullable().optional(),
    siteId: z.uuid().optional(),
    deviceGroupIds: z.array(z.uuid()).max(100).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .meta({ minProperties: 1 });

export const addDevicesBody = z.strictObject({ deviceIds: z.array(z.uuid()).min(1).max(1000) });

export const moveDevicesBody = z
  .strictObject({
    deviceIds: z.array(z.uuid()).min(1).max(500).describe('The devices to move, all of one organisation'),
    siteId: z.uuid().optional().describe('The site they move to'),
    deviceGroupId: z
      .uuid()
      .nullable()
      .optional()
      .describe('The device group they move to, replacing the groups the caller can see; null = out of every group'),
  })
  .refine((b) => b.siteId !== undefined || b.deviceGroupId !== undefined, {
    message: 'Name a site or a device group',
  })
  .meta({ id: 'MoveDevices' });
export const movedDevices = z.object({ moved: z.number().int().describe('How many devices moved') });
