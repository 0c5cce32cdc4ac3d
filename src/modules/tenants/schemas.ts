import { z } from 'zod';
import { ianaTimezone } from '../../http/schemas.js';
import { tenantSettingsSchema } from '../../access/settings.js';
import { GETTING_STARTED_STEPS } from './getting-started.js';

const slug = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'lower-case letters, digits and dashes');
const name = z.string().trim().min(1).max(255);
const timezone = ianaTimezone;

export const orgJson = z
  .object({
    id: z.uuid(),
    partnerId: z.uuid(),
    name: z.string(),
    slug: z.string(),
    status: z.enum(['active', 'suspended']),
    settings: z.record(z.string(), z.unknown()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({
    id: 'Organization',
    examples: [
      {
        id: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
        partnerId: '8d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6',
        name: 'Contoso Dental',
        slug: 'contoso-dental',
        status: 'active',
        settings: {},
        createdAt: '2026-03-01T12:00:00.000Z',
        updatedAt: '2026-03-01T12:00:00.000Z',
      },
    ],
  });
export const createOrgBody = z
  .strictObject({ name, slug: slug.optional(), settings: tenantSettingsSchema.optional() })
  .meta({ examples: [{ name: 'Contoso Dental', slug: 'contoso-dental' }] });
export const updateOrgBody = z
  .strictObject({
    name: name.optional(),
    slug: slug.optional(),
    status: z.enum(['active', 'suspended']).optional(),
    settings: tenantSettingsSchema.optional(),
    confirmLockout: z
      .boolean()
      .optional()
      .describe('Save an IP allow-list even though it leaves out your current address (else 409 ip_lockout)'),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .meta({ minProperties: 1 });
export const partnerJson = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  status: z.enum(['active', 'suspended']),
  settings: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const updatePartnerBody = z
  .strictObject({
    name: name.optional(),
    settings: tenantSettingsSchema.optional(),
    confirmLockout: z
      .boolean()
      .optional()
      .describe('Save an IP allow-list even though it leaves out your current address (else 409 ip_lockout)'),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .meta({ minProperties: 1 });
export const effectiveSettings = z.object({
  orgId: z.uuid(),
  security: z.object({
    requireMfa: z.boolean(),
    allowedMfaMethods: z.object({ totp: z.boolean(), sms: z.boolean(), passkey: z.boolean() }),
  }),
  sources: z.object({ partner: z.record(z.string(), z.unknown()), organization: z.record(z.string(), z.unknown()) }),
});

export const siteJson = z
  .object({
    id: z.uuid(),
    orgId: z.uuid(),
    name: z.string(),
    timezone: z.string(),
    address: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Site' });
export const createSiteBody = z.strictObject({
  orgId: z.uuid(),
  name,
  timezone: timezone.optional(),
  address: z.string().max(1000).nullable().optional(),
});
export const updateSiteBody = z
  .strictObject({
    name: name.optional(),
    timezone: timezone.optional(),
    address: z.string().max(1000).nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .meta({ minProperties: 1 });

export const groupJson = z
  .object({
    id: z.uuid(),
    orgId: z.uuid(),
    siteId: z.uuid().nullable(),
    name: z.string(),
    deviceCount: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'DeviceGroup' });
export const createGroupBody = z.strictObject({ orgId: z.uuid(), siteId: z.uuid().nullable().optional(), name });
export const updateGroupBody = z
  .strictObject({ name: name.optional(), siteId: z.uuid().nullable().optional() })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .meta({ minProperties: 1 });

export const listQuery = z.strictObject({
  orgId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: z.string().max(255).optional(),
});
export const orgRequiredQuery = listQuery.extend({ orgId: z.uuid() });

export const gettingStartedJson = z
  .object({
    partnerName: z.string().describe("The partner's name"),
    complete: z.boolean().describe('Every step is done'),
    items: z.array(
      z.object({
        id: z.enum(GETTING_STARTED_STEPS).describe('The step'),
        title: z.string().describe('What the step asks, in words'),
        description: z.string().describe('Why, in one sentence'),
        done: z.boolean().describe("Done, as the partner's data shows now"),
        link: z.string().describe('The console page where the step is done'),
      }),
    ),
  })
  .meta({
    examples: [
      {
        partnerName: 'Northwind MSP',
        complete: false,
        items: [
          {
            id: 'organization',
            title: 'Create your first customer organisation',
            description: 'Each customer is an organisation with its sites and device groups.',
            done: true,
            link: '/tenants',
          },
          {
            id: 'require_mfa',
            title: 'Require two-step verification for your staff',
            description: 'Everyone on your staff enrols a second factor at their next sign-in.',
            done: false,
            link: '/security',
          },
        ],
      },
    ],
  });
