// Scripts: language, parameters, availability and the exit-code severity mapping.
import { z } from 'zod';
import { isStorable, name255, storableString } from '../config-items/index.js';

export const LANGUAGES = ['powershell', 'cmd', 'bash', 'python'] as const;
export const AVAILABILITIES = ['organization', 'partner'] as const;
export const SEVERITIES = ['info', 'warning', 'error', 'critical'] as const;
export const MAX_CONTENT_BYTES = 1024 * 1024;
/** A 1 MiB script escaped as JSON can be several times larger on the wire. */
export const SCRIPT_BODY_LIMIT = 8 * 1024 * 1024;

const PARAM_TYPES = ['string', 'number', 'boolean', 'select'] as const;
type ParamType = (typeof PARAM_TYPES)[number];

const option = storableString().min(1).max(255);
const parameter = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an identifier: a letter or _ then letters, digits or _'),
    type: z.enum(PARAM_TYPES),
    required: z.boolean().optional(),
    default: z.union([storableString().max(4096), z.number(), z.boolean()]).optional(),
    options: z.array(option).min(1).max(100).optional().describe('select only: the allowed values, distinct'),
    description: storableString().max(1000).optional(),
  })
  .superRefine((prm, ctx) => {
    if (prm.type === 'select') {
      if (!prm.options)
        ctx.addIssue({ code: 'custom', path: ['options'], message: 'a select parameter needs options' });
      else if (new Set(prm.options).size !== prm.options.length)
        ctx.addIssue({ code: 'custom', path: ['options'], message: 'options must be distinct' });
    } else if (prm.options !== undefined)
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'only a select parameter has options' });
    if (prm.default !== undefined && !defaultFits(prm.type, prm.default, prm.options))
      ctx.addIssue({
        code: 'custom',
        path: ['default'],
        message: `the default must be a ${prm.type === 'select' ? 'value among the options' : prm.type}`,
      });
  });

function defaultFits(type: ParamType, value: string | number | boolean, options: string[] | undefined): boolean {
  if (type === 'string') return typeof value === 'string';
  if (type === 'number') return typeof value === 'number' && Number.isFinite(value);
  if (type === 'boolean') return typeof value === 'boolean';
  return typeof value === 'string' && (options ?? []).includes(value);
}

export const parametersSchema = z
  .array(parameter)
  .max(50)
  .superRefine((list, ctx) => {
    const seen = new Map<string, number>();
    list.forEach((prm, i) => {
      const key = prm.name.toLowerCase(); // PowerShell parameter names are case-insensitive
      if (seen.has(key))
        ctx.addIssue({
          code: 'custom',
          path: [i, 'name'],
          message: `duplicate parameter name (also at ${seen.get(key)})`,
        });
      else seen.set(key, i);
    });
  })
  .describe('Up to 50 parameters with distinct names (case-insensitive); defaults of the declared type');
export type ScriptParameter = z.infer<typeof parameter>;

const INT32 = /^(0|-?[1-9]\d{0,9})$/;
const exitCode = z
  .string()
  .refine(
    (s) => INT32.test(s) && Number(s) >= -2147483648 && Number(s) <= 2147483647,
    'an exit code: an integer from -2147483648 to 2147483647, written without leading zeros',
  );
export const exitCodeMappingSchema = z
  .record(exitCode, z.enum(SEVERITIES))
  .refine((m) => Object.keys(m).length <= 1000, 'at most 1000 exit codes')
  .describe('Exit code (integer string) → info | warning | error | critical');

const content = z
  .string()
  .min(1)
  .refine(isStorable, 'must not contain NUL characters or unpaired surrogates')
  .refine((s) => Buffer.byteLength(s, 'utf8') <= MAX_CONTENT_BYTES, 'at most 1 MiB (UTF-8)');
const description = storableString().max(10_000).nullable().optional();

export const createScriptBody = z
  .strictObject({
    orgId: z
      .uuid()
      .optional()
      .describe('Required when availability is organization (an organisation caller: its own); absent when partner'),
    name: name255(),
    description,
    language: z.enum(LANGUAGES),
    content,
    parameters: parametersSchema.optional(),
    availability: z
      .enum(AVAILABILITIES)
      .describe("partner = the partner's library, visible in every organisation; needs orgAccess all"),
    exitCodeSeverityMapping: exitCodeMappingSchema.optional(),
  })
  .superRefine((b, ctx) => {
    if (b.availability === 'organization' && b.orgId === undefined)
      ctx.addIssue({ code: 'custom', path: ['orgId'], message: 'an organization script names its organization' });
    if (b.availability === 'partner' && b.orgId !== undefined)
      ctx.addIssue({ code: 'custom', path: ['orgId'], message: 'a partner script belongs to no organization' });
  });
export type CreateScript = z.infer<typeof createScriptBody>;

export const updateScriptBody = z
  .strictObject({
    name: name255().optional(),
    description,
    language: z.enum(LANGUAGES).optional(),
    content: content.optional(),
    parameters: parametersSchema.optional(),
    exitCodeSeverityMapping: exitCodeMappingSchema.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .meta({ minProperties: 1 })
  .describe('availability and orgId are fixed at creation');
export type UpdateScript = z.infer<typeof updateScriptBody>;

const parameterJson = z.object({
  name: z.string(),
  type: z.enum(PARAM_TYPES),
  required: z.boolean().optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  options: z.array(z.string()).optional(),
  description: z.string().optional(),
});
const summaryShape = {
  id: z.uuid(),
  partnerId: z.uuid(),
  orgId: z.uuid().nullable(),
  name: z.string(),
  description: z.string().nullable(),
  language: z.enum(LANGUAGES),
  availability: z.enum(AVAILABILITIES),
  parameters: z.array(parameterJson),
  exitCodeSeverityMapping: z.record(z.string(), z.enum(SEVERITIES)),
  source: z.enum(['partner', 'organization']),
  createdBy: z.uuid().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
};
export const scriptSummaryJson = z
  .object(summaryShape)
  .meta({ id: 'ScriptSummary', description: 'A script without its content (list rows)' });
export const scriptJson = z.object({ ...summaryShape, content: z.string() }).meta({ id: 'Script' });

export const scriptListQuery = z.strictObject({
  orgId: z
    .uuid()
    .optional()
    .describe(
      "An organisation: the partner's scripts and its own. Omitted: the partner's scripts (an organisation caller: its own list)",
    ),
  language: z.enum(LANGUAGES).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: storableString().max(255).optional().describe('Prefix of the name'),
});
