import { z } from 'zod';

export const keyJson = z
  .object({
    id: z.uuid(),
    orgId: z.uuid(),
    siteId: z.uuid().nullable().describe('The site enrolled devices join; null = the agent names one'),
    deviceGroupId: z.uuid().nullable().describe('The device group enrolled devices join; null = none'),
    name: z.string(),
    maxUsage: z.number().int(),
    usageCount: z.number().int(),
    expiresAt: z.string(),
    createdAt: z.string(),
  })
  .meta({ id: 'EnrollmentKey' });
export const createdKey = keyJson.extend({ key: z.string().describe('Shown once; only its hash is stored') });
export const createKeyBody = z.strictObject({
  orgId: z.uuid(),
  siteId: z.uuid().nullable().optional(),
  deviceGroupId: z.uuid().nullable().optional(),
  name: z.string().trim().min(1).max(255),
  maxUsage: z.number().int().min(1).max(1_000_000).optional(),
  expiresAt: z.iso.datetime({ offset: true }).optional(),
});
export const keyListQuery = z.strictObject({
  orgId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
});

const osType = z.enum(['windows', 'macos', 'linux']);
export const enrollBody = z.strictObject({
  enrollmentKey: z.string().min(10).max(200),
  hostname: z.string().trim().min(1).max(255),
  osType,
  osVersion: z.string().max(255).optional(),
  agentVersion: z.string().max(64).optional(),
  siteId: z.uuid().optional(),
});
export const enrollResponse = z.object({
  deviceId: z.uuid(),
  agentToken: z.string(),
  orgId: z.uuid(),
  siteId: z.uuid(),
});

const software = z.strictObject({
  name: z.string().min(1).max(512),
  version: z.string().max(128).optional(),
  publisher: z.string().max(512).optional(),
  installedAt: z.string().max(64).optional(),
});
const patch = z.strictObject({
  id: z.string().min(1).max(128),
  title: z.string().max(1024).optional(),
  status: z.enum(['installed', 'missing', 'pending', 'failed']),
  severity: z.enum(['critical', 'important', 'moderate', 'low', 'unspecified']).optional(),
  installedAt: z.string().max(64).optional(),
});
export const inventoryBody = z.strictObject({
  hardware: z
    .record(z.string().max(128), z.union([z.string().max(2048), z.number(), z.boolean(), z.null()]))
    .meta({ maxProperties: 200 })
    .refine((h) => Object.keys(h).length <= 200, 'at most 200 hardware fields'),
  software: z.array(software).max(20_000),
  patches: z.array(patch).max(20_000),
});
