// Bodies and answers of the just-in-time access routes.
import { z } from 'zod';
import { JIT_APPROVAL } from '../../access/settings.js';

export const accessRequestBody = z
  .strictObject({
    orgId: z.uuid().describe("The organisation (of the caller's partner) to reach"),
    siteId: z.uuid().optional().describe('Optional: one site of it only'),
    durationMinutes: z
      .number()
      .int()
      .min(1)
      .max(10080)
      .describe("How long, in minutes; at most the partner's settings.security.jitMaxMinutes (default 480)"),
    reason: z.string().trim().min(1).max(1000).describe('Why (audited, shown to approvers)'),
    ticketRef: z.string().trim().min(1).max(200).optional().describe('A ticket reference (audited)'),
  })
  .meta({
    examples: [
      {
        orgId: '7a1d0c5e-2b3f-4c6d-8e9f-0a1b2c3d4e5f',
        durationMinutes: 60,
        reason: 'Patch the file server',
        ticketRef: 'INC-1042',
      },
    ],
  });
export type AccessRequestBody = z.infer<typeof accessRequestBody>;

export const decisionBody = z.strictObject({
  note: z.string().trim().max(1000).optional().describe('Optional note, audited'),
});
export type DecisionBody = z.infer<typeof decisionBody>;

export const requestListQuery = z.strictObject({
  view: z
    .enum(['all', 'own', 'approvable'])
    .default('all')
    .describe("own: the caller's requests; approvable: pending requests the caller may approve; all: both"),
  status: z.enum(['pending', 'approved', 'denied']).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type RequestListQuery = z.infer<typeof requestListQuery>;

export const grantListQuery = z.strictObject({
  state: z
    .enum(['active', 'all'])
    .default('active')
    .describe('active: in force now (default); all: with the expired and revoked'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type GrantListQuery = z.infer<typeof grantListQuery>;

export const accessGrant = z
  .object({
    id: z.uuid(),
    requestId: z.uuid(),
    partnerId: z.uuid(),
    orgId: z.uuid(),
    siteId: z.uuid().nullable(),
    userId: z.uuid(),
    userName: z.string().nullable().describe("The person's name (null when it is not visible to the caller)"),
    userEmail: z.string().nullable().describe("The person's e-mail address"),
    orgName: z.string().nullable().describe("The organisation's name"),
    approval: z.enum(JIT_APPROVAL),
    approvedBy: z.uuid().nullable(),
    startsAt: z.string(),
    expiresAt: z.string(),
    revokedAt: z.string().nullable(),
    revokedBy: z.uuid().nullable(),
    state: z.enum(['active', 'expired', 'revoked']),
    reason: z.string(),
    ticketRef: z.string().nullable(),
  })
  .meta({ id: 'AccessGrant' });

export const accessRequest = z
  .object({
    id: z.uuid(),
    partnerId: z.uuid(),
    orgId: z.uuid(),
    siteId: z.uuid().nullable(),
    userId: z.uuid(),
    userName: z.string().nullable().describe("The person's name (null when it is not visible to the caller)"),
    userEmail: z.string().nullable().describe("The person's e-mail address"),
    orgName: z.string().nullable().describe("The organisation's name"),
    durationMinutes: z.number().int(),
    reason: z.string(),
    ticketRef: z.string().nullable(),
    approval: z
      .enum(JIT_APPROVAL)
      .describe("Who approves, by the organisation's jitApproval (customer_admin under mspAccess approval_required)"),
    status: z.enum(['pending', 'approved', 'denied']),
    decidedBy: z.uuid().nullable(),
    decidedAt: z.string().nullable(),
    decisionNote: z.string().nullable(),
    createdAt: z.string(),
    grant: accessGrant.nullable().describe('The grant the approval opened (auto: at once)'),
  })
  .meta({ id: 'AccessRequest' });

export const accessRequestList = z.object({ data: z.array(accessRequest) });
export const accessGrantList = z.object({ data: z.array(accessGrant) });
