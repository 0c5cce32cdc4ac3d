// Custom fields: definitions, typed values and the CSV import wizard.
import { z } from 'zod';
import { name255, storableString } from '../config-items/index.js';

export const FIELD_TYPES = ['text', 'number', 'boolean', 'date', 'select'] as const;
export const ENTITY_TYPES = ['device', 'site', 'organization', 'contact'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export type EntityType = (typeof ENTITY_TYPES)[number];
export const MAX_IMPORT_CSV_BYTES = 20 * 1024 * 1024;

const distinct = (a: string[]) => new Set(a).size === a.length;
export const fieldKey = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z][a-z0-9_]*$/, 'lower-case letters, digits and _, starting with a letter');
const options = z
  .array(storableString().trim().min(1).max(255))
  .min(1)
  .max(200)
  .refine(distinct, 'options must be distinct')
  .meta({ uniqueItems: true, description: 'select only: 1..200 distinct strings' });
const entityType = z.enum(ENTITY_TYPES);

export const createDefinitionBody = z
  .strictObject({
    key: fieldKey,
    name: name255(),
    type: z.enum(FIELD_TYPES),
    options: options.nullable().optional(),
    entityType,
    orgId: z
      .uuid()
      .optional()
      .describe(
        'Owning organisation; omitted from a partner caller = partner-wide (needs orgAccess all). An organisation caller always defines for its own organisation',
      ),
  })
  .superRefine((b, ctx) => {
    if (b.type === 'select' && !b.options)
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'a select field needs options' });
    if (b.type !== 'select' && b.options)
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'only a select field has options' });
  });
export type CreateDefinition = z.infer<typeof createDefinitionBody>;

export const updateDefinitionBody = z
  .strictObject({
    name: name255().optional(),
    options: options.optional().describe('select only; an option still used by a value cannot be removed (409)'),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .meta({ minProperties: 1 })
  .describe('key, type and entityType are fixed at creation');
export type UpdateDefinition = z.infer<typeof updateDefinitionBody>;

export const definitionJson = z
  .object({
    id: z.uuid(),
    partnerId: z.uuid(),
    orgId: z.uuid().nullable(),
    key: z.string(),
    name: z.string(),
    type: z.enum(FIELD_TYPES),
    options: z.array(z.string()).nullable(),
    entityType,
    source: z
      .enum(['partner', 'organization'])
      .describe('partner = partner-wide, in force in every organisation of the partner'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'CustomFieldDefinition' });

export const definitionListQuery = z.strictObject({
  orgId: z
    .uuid()
    .optional()
    .describe(
      'An organisation: the partner-wide definitions and its own. Omitted: partner-wide only (an organisation caller: its own list)',
    ),
  entityType: entityType.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: storableString().max(255).optional().describe('Prefix of the key or the name'),
});

export const valuesQuery = z.strictObject({ entityType, entityId: z.uuid() });
export const putValuesBody = z.strictObject({
  entityType,
  entityId: z.uuid(),
  values: z
    .record(fieldKey, z.unknown())
    .refine((v) => Object.keys(v).length >= 1 && Object.keys(v).length <= 200, 'give 1..200 fields')
    .meta({ minProperties: 1, maxProperties: 200 })
    .describe(
      'field key → value of its type: number, boolean, "YYYY-MM-DD" for dates, a string otherwise (a select: one of its options); null clears',
    ),
});
export const valuesJson = z
  .object({ data: z.array(z.object({ key: z.string(), value: z.unknown() })) })
  .meta({ id: 'CustomFieldValues' });

const MATCH_DOC =
  'matchColumn names the CSV column that identifies the entity: device → hostname (case-insensitive; a hostname shared by several devices is invalid); ' +
  'site → site name (case-insensitive); organization → the name or slug of the organisation orgId (other organisations are unmatched); ' +
  'contact → externalId (exact), else email (case-insensitive; ambiguous = invalid). Only entities the caller may see are matched.';
export const importBody = z
  .strictObject({
    orgId: z.uuid(),
    entityType,
    csv: z.string().min(1).max(MAX_IMPORT_CSV_BYTES),
    matchColumn: storableString().trim().min(1).max(255),
    mapping: z
      .record(storableString().trim().min(1).max(255), fieldKey)
      .refine((m) => Object.keys(m).length >= 1 && Object.keys(m).length <= 200, 'map 1..200 columns')
      .describe('CSV column → field key'),
  })
  .describe(MATCH_DOC);
export type ImportInput = z.infer<typeof importBody>;

export const previewJson = z.object({
  summary: z.object({ valid: z.number().int(), unmatched: z.number().int(), invalid: z.number().int() }),
  rows: z.array(
    z.object({
      line: z.number().int(),
      entityId: z.uuid().nullable(),
      status: z.enum(['valid', 'unmatched', 'invalid']),
      errors: z.array(z.string()).optional(),
    }),
  ),
});
export const commitJson = z.object({ summary: z.object({ written: z.number().int(), skipped: z.number().int() }) });
export { MATCH_DOC };
