// Partner-wide configuration items: policies, alert templates, patch policies, maintenance windows.
// `body` has one schema per kind, declared here and published in the OpenAPI document.
import { z } from 'zod';
import { ianaTimezone } from '../../http/schemas.js';
import { isStorable, name255, storableJson, storableString } from './ownership.js';

export const CONFIG_KINDS = ['policy', 'alert_template', 'patch_policy', 'maintenance_window'] as const;
export type ConfigKind = (typeof CONFIG_KINDS)[number];

const distinct = <T>(a: T[]) => new Set(a).size === a.length;

/** A recurring window in a time zone: starts at `start` local time on each of `daysOfWeek` (0 = Sunday). */
export const maintenanceWindowBody = z
  .strictObject({
    timezone: ianaTimezone,
    start: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM, 00:00 to 23:59'),
    durationMinutes: z.number().int().min(1).max(1440),
    daysOfWeek: z
      .array(z.number().int().min(0).max(6))
      .min(1)
      .max(7)
      .refine(distinct, 'days must be distinct')
      .meta({ uniqueItems: true }),
  })
  .meta({
    id: 'MaintenanceWindowBody',
    description: 'timezone (IANA), start "HH:MM", durationMinutes 1..1440, daysOfWeek 0 (Sunday)..6, distinct',
  });

/** Which patch classifications install without approval, how reboots are handled, and how long releases wait. */
export const patchPolicyBody = z
  .strictObject({
    autoApprove: z
      .array(z.enum(['critical', 'important', 'moderate', 'low']))
      .max(4)
      .refine(distinct, 'classifications must be distinct')
      .meta({ uniqueItems: true }),
    rebootBehavior: z.enum(['never', 'if_required', 'always']),
    deferDays: z.number().int().min(0).max(365),
  })
  .meta({
    id: 'PatchPolicyBody',
    description: 'autoApprove: distinct classifications; rebootBehavior; deferDays 0..365',
  });

export const SEVERITIES = ['info', 'warning', 'error', 'critical'] as const;

/** An alert raised when `condition` holds, at `severity`, notifying each recipient (address or channel name). */
export const alertTemplateBody = z
  .strictObject({
    condition: storableString().trim().min(1).max(2000),
    severity: z.enum(SEVERITIES),
    notify: z
      .array(storableString().trim().min(1).max(255))
      .max(50)
      .refine(distinct, 'recipients must be distinct')
      .meta({ uniqueItems: true }),
  })
  .meta({
    id: 'AlertTemplateBody',
    description: 'condition (1..2000 characters), severity, notify: up to 50 distinct recipients',
  });

const SETTINGS_MAX_BYTES = 64 * 1024;
/** Free-form settings of a policy: up to 200 keys, JSON values nested at most 8 levels, 64 KiB in all. */
export const policyBody = z
  .strictObject({
    settings: z
      .record(z.string().min(1).max(100).refine(isStorable, 'not storable'), z.unknown())
      .refine((s) => Object.keys(s).length <= 200, 'at most 200 settings')
      .meta({ maxProperties: 200 })
      .refine(
        (s) => storableJson(s),
        'values must be JSON without NUL characters or unpaired surrogates, nested at most 8 levels',
      )
      .refine((s) => Buffer.byteLength(JSON.stringify(s)) <= SETTINGS_MAX_BYTES, 'at most 64 KiB'),
  })
  .meta({ id: 'PolicyBody', description: 'settings: up to 200 keys of JSON values, at most 64 KiB' });

export const BODY_SCHEMAS = {
  policy: policyBody,
  alert_template: alertTemplateBody,
  patch_policy: patchPolicyBody,
  maintenance_window: maintenanceWindowBody,
} as const satisfies Record<ConfigKind, z.ZodType>;

const description = storableString().max(10_000).nullable().optional();
const common = {
  name: name255(),
  description,
  orgId: z
    .uuid()
    .optional()
    .describe('Owning organisation; omitted from a partner caller = partner-owned (needs orgAccess all)'),
};

export const createConfigItemBody = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('policy'), body: policyBody, ...common }),
  z.strictObject({ kind: z.literal('alert_template'), body: alertTemplateBody, ...common }),
  z.strictObject({ kind: z.literal('patch_policy'), body: patchPolicyBody, ...common }),
  z.strictObject({ kind: z.literal('maintenance_window'), body: maintenanceWindowBody, ...common }),
]);
export type CreateConfigItem = z.infer<typeof createConfigItemBody>;

/** `body` must fit the item's kind; the schema admits any kind's shape and the service checks the item's own. */
export const updateConfigItemBody = z
  .strictObject({
    name: name255().optional(),
    description,
    body: z.union([policyBody, alertTemplateBody, patchPolicyBody, maintenanceWindowBody]).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .meta({ minProperties: 1 });
export type UpdateConfigItem = z.infer<typeof updateConfigItemBody>;

export const configItemJson = z
  .object({
    id: z.uuid(),
    partnerId: z.uuid(),
    orgId: z.uuid().nullable(),
    kind: z.enum(CONFIG_KINDS),
    name: z.string(),
    description: z.string().nullable(),
    body: z.record(z.string(), z.unknown()),
    source: z
      .enum(['partner', 'organization'])
      .describe('partner = partner-owned, in force in every organisation of the partner'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'ConfigItem' });

export const configItemListQuery = z.strictObject({
  orgId: z
    .uuid()
    .optional()
    .describe(
      'An organisation: its effective list (partner-owned and its own items). Omitted: partner-owned items (an organisation caller: its own effective list)',
    ),
  kind: z.enum(CONFIG_KINDS).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: storableString().max(255).optional().describe('Prefix of the name'),
});
