// Schemas of the console's per-tenant answers: the caller's capabilities and who does not meet the security policy.
import { z } from 'zod';
import { CAPABILITIES } from './capabilities.js';

export const tenantQuery = z.strictObject({
  orgId: z
    .uuid()
    .optional()
    .describe("An organisation in the caller's scope; absent = the caller's own tenant (partner or organisation)"),
});

export const capabilitiesResponse = z
  .object({
    orgId: z.uuid().nullable().describe('The organisation the answer is about; null = the partner'),
    actions: z.array(
      z.object({
        action: z.enum(CAPABILITIES).describe('A console action'),
        allowed: z.boolean(),
        reason: z.string().nullable().describe('Why it is refused, in words (null when allowed)'),
      }),
    ),
  })
  .meta({
    examples: [
      {
        orgId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
        actions: [
          { action: 'organization.update', allowed: true, reason: null },
          {
            action: 'organization.delete',
            allowed: false,
            reason: 'The role does not grant organizations:delete.',
          },
        ],
      },
    ],
  });

export const complianceResponse = z
  .object({
    tenant: z.object({
      type: z.enum(['partner', 'organization']),
      partnerId: z.uuid(),
      orgId: z.uuid().nullable(),
    }),
    data: z.array(
      z.object({
        userId: z.uuid(),
        name: z.string(),
        email: z.string(),
        roleName: z.string(),
        missing: z
          .enum(['second_factor', 'passkey'])
          .describe('What the policy asks of them that they have not enrolled'),
      }),
    ),
  })
  .meta({
    examples: [
      {
        tenant: { type: 'partner', partnerId: '8d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6', orgId: null },
        data: [
          {
            userId: '0b1c2d3e-4f50-4a6b-8c7d-8e9fa0b1c2d3',
            name: 'Sam Rivera',
            email: 'sam@msp.example',
            roleName: 'Partner Technician',
            missing: 'second_factor',
          },
        ],
      },
    ],
  });

export const remindBody = z
  .strictObject({
    orgId: z.uuid().optional().describe("An organisation in the caller's scope; absent = the caller's own tenant"),
    userIds: z.array(z.uuid()).min(1).max(1000).optional().describe('Only these members; absent = every one listed'),
  })
  .meta({ examples: [{ userIds: ['0b1c2d3e-4f50-4a6b-8c7d-8e9fa0b1c2d3'] }] });

export const remindResponse = z
  .object({
    reminded: z.array(z.uuid()).describe('Members mailed now'),
    skipped: z.array(z.uuid()).describe('Members already reminded in the last 24 hours'),
  })
  .meta({ examples: [{ reminded: ['0b1c2d3e-4f50-4a6b-8c7d-8e9fa0b1c2d3'], skipped: [] }] });
