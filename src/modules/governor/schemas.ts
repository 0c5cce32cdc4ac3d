// The governor's request and response shapes: freezes, co-sign requests, the partner's governor view.
import { z } from 'zod';
import { BUDGET_DIMENSIONS } from '../../platform/budget-store.js';
import { budgetSchema } from '../../access/governor-settings.js';

export const freezeBody = z.strictObject({
  reason: z.string().trim().min(3).max(500).describe('Why: shown to both sides, mailed and audited'),
});

export const freezeJson = z
  .object({
    side: z.enum(['partner', 'organization']).describe('The side that set it; only that side lifts it'),
    reason: z.string(),
    at: z.string().describe('Since when (ISO 8601)'),
    byName: z.string().describe('Who set it, by name'),
  })
  .meta({ id: 'Freeze' });

export const freezeState = z.object({
  frozen: z.boolean(),
  freeze: freezeJson.nullable(),
});

export const coSignBody = z.strictObject({
  reason: z.string().trim().min(3).max(500).describe('Why the principal needs to go over its budget'),
});

export const coSignJson = z
  .object({
    id: z.uuid(),
    principalType: z.enum(['user', 'service_account']),
    principalId: z.uuid(),
    principalName: z.string(),
    reason: z.string(),
    status: z.enum(['pending', 'approved', 'expired', 'used']),
    actions: z.number().int().describe('How many over-budget destructive actions the approval lets through'),
    remaining: z.number().int(),
    createdAt: z.string(),
    expiresAt: z.string().describe('Pending: approve before this'),
    approvedByName: z.string().nullable(),
    approvedAt: z.string().nullable(),
    unlockExpiresAt: z.string().nullable().describe('Approved: the actions are usable until this'),
  })
  .meta({ id: 'CoSignRequest' });

export const coSignList = z.object({ data: z.array(coSignJson) });

export const coSignListQuery = z.strictObject({
  status: z.enum(['pending', 'approved', 'expired', 'used']).optional(),
});

export const governorView = z.object({
  freeze: freezeJson.nullable().describe("The partner's own freeze"),
  frozenOrganizations: z.array(z.object({ id: z.uuid(), name: z.string(), freeze: freezeJson })),
  budget: budgetSchema.nullable().describe("The partner's budget (settings.governor.budget)"),
  coSign: z.object({ minutes: z.number().int(), actions: z.number().int() }),
  dimensions: z.array(z.enum(BUDGET_DIMENSIONS)),
});
