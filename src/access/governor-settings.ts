// The governor's settings, part of a tenant's settings (settings.governor): the blast-radius budgets a partner sets for
// its staff and service accounts, the stricter ones an organisation sets for itself, and (partner only) how a
// co-signature unlocks an over-budget principal. None by default: a tenant without budgets is not metered.
import { z } from 'zod';

const limit = (what: string) =>
  z.number().int().min(1).max(1_000_000).optional().describe(`At most this many ${what} per principal in the window`);

export const budgetSchema = z
  .strictObject({
    windowMinutes: z
      .number()
      .int()
      .min(1)
      .max(1440)
      .describe('The sliding window the budget counts over, in minutes (1 to 1440)'),
    maxOrganizations: limit('distinct organisations touched by destructive actions'),
    maxDevices: limit('distinct devices affected by destructive actions'),
    maxDestructive: limit('uses of destructive permissions'),
  })
  .refine((b) => b.maxOrganizations !== undefined || b.maxDevices !== undefined || b.maxDestructive !== undefined, {
    message: 'Set at least one of maxOrganizations, maxDevices, maxDestructive',
  })
  .describe(
    'A blast-radius budget: per principal (person or service account), over a sliding window, the distinct organisations touched, the distinct devices affected and the uses of destructive permissions; over it, the next destructive action answers 403 budget_exceeded',
  );
export type Budget = z.infer<typeof budgetSchema>;

export const CO_SIGN_DEFAULTS = { minutes: 30, actions: 10 } as const;

export const governorSettingsSchema = z
  .strictObject({
    budget: budgetSchema
      .nullable()
      .optional()
      .describe(
        "The tenant's budget (null or absent: none). A partner's holds its staff and service accounts everywhere; an organisation's holds everyone acting in it, on top of its partner's (the stricter wins)",
      ),
    coSign: z
      .strictObject({
        minutes: z
          .number()
          .int()
          .min(1)
          .max(1440)
          .optional()
          .describe(
            `How long a co-sign request waits for approval, and how long the approved unlock lasts, in minutes (default ${CO_SIGN_DEFAULTS.minutes})`,
          ),
        actions: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .optional()
          .describe(
            `How many over-budget destructive actions an approved co-signature lets through (default ${CO_SIGN_DEFAULTS.actions})`,
          ),
      })
      .optional()
      .describe('Partner only: how a co-signature by another Partner Admin unlocks an over-budget principal'),
  })
  .describe('The blast-radius governor: budgets on destructive actions, and co-signatures');
export type GovernorSettings = z.infer<typeof governorSettingsSchema>;
