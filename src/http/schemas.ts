// Shapes shared by every route schema.
import { z } from 'zod';
import { ERROR_CATALOG } from './errors.js';

const ERROR_CODES = Object.keys(ERROR_CATALOG);

/**
 * Every non-2xx answer. At run time `code` is any string and extra fields pass through (an error answer must never
 * fail its own serialisation); the document declares `code` as the catalogue's enum, and the OpenAPI walk test
 * checks every answer against it.
 */
export const errorEnvelope = z
  .looseObject({
    error: z.string().meta({ description: 'Short text of the HTTP status.', examples: ['Bad Request'] }),
    message: z.string().meta({
      description: 'A sentence for people; clients branch on `code`, never on this.',
      examples: ['The request is not valid.'],
    }),
    code: z.string().meta({
      enum: ERROR_CODES,
      description: 'The catalogued reason (src/http/errors.ts).',
      examples: ['validation_failed'],
    }),
    details: z.looseObject({}).optional().meta({
      description:
        'validation_failed: `{ fieldErrors: { "<path>": [..] }, formErrors: [..] }`; weak_password: `{ feedback }`.',
    }),
    errorId: z
      .string()
      .optional()
      .meta({ description: 'On 5xx: the id of the server log line of this failure.', format: 'uuid' }),
    retryAfter: z.number().optional().meta({
      description: 'On 429 (and some 503): whole seconds to wait; also in the Retry-After header.',
      type: 'integer',
      minimum: 0,
    }),
    userCount: z
      .number()
      .optional()
      .meta({ description: 'role_has_users: how many users hold the role.', type: 'integer' }),
    childRoleCount: z
      .number()
      .optional()
      .meta({ description: 'role_has_children: how many roles inherit from it.', type: 'integer' }),
    enrollUrl: z.string().optional().meta({ description: 'mfa_enrollment_required: where to enrol a factor.' }),
    allowedMethods: z
      .array(z.string())
      .optional()
      .meta({ description: 'mfa_enrollment_required: the factors the policy allows.' }),
    requires: z.enum(['step_up', 'co_sign']).optional().meta({
      description:
        'budget_exceeded: what unlocks it: `step_up` (a fresh step-up with a passkey) or `co_sign` (another Partner Admin approves a co-sign request).',
    }),
    budget: z
      .object({
        setBy: z.enum(['partner', 'organization']),
        dimension: z.enum(['organizations', 'devices', 'destructive']),
        limit: z.number(),
        used: z.number(),
        windowMinutes: z.number(),
      })
      .optional()
      .meta({ description: 'budget_exceeded: the budget crossed, and what this action would make of it.' }),
    freeze: z
      .object({ side: z.enum(['partner', 'organization']), reason: z.string(), byName: z.string(), at: z.string() })
      .optional()
      .meta({ description: 'frozen: the freeze in force (who set it, by name, from which side, why, since when).' }),
  })
  .meta({
    id: 'Error',
    description: 'Every non-2xx answer: `{ error, message, code }` plus the fields its code names.',
    examples: [
      {
        error: 'Bad Request',
        message: 'The request is not valid.',
        code: 'validation_failed',
        details: { fieldErrors: { email: ['Invalid email address'] }, formErrors: [] },
      },
    ],
  });

/** Error answers a route may give, for the OpenAPI document (bodies pass through unchanged). */
export function errors(...statuses: (400 | 401 | 403 | 404 | 409 | 413 | 415 | 428 | 429)[]) {
  return Object.fromEntries(statuses.map((s) => [s, errorEnvelope])) as Record<number, typeof errorEnvelope>;
}

/** Errors every authenticated route can answer. */
export const authErrors = errors(401, 403, 428);

export const uuid = z.uuid();
export const isoDate = z.iso.datetime();
/** The path parameters of every route that names one record: `/:id`, a UUID, nothing else. */
export const idParam = z.strictObject({ id: z.uuid() });

const TIMEZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);
/** An IANA time zone name (or UTC): sites, maintenance windows. Published once, as the TimeZone component. */
export const ianaTimezone = z
  .string()
  .max(64)
  .refine((tz) => TIMEZONES.has(tz), 'must be an IANA time zone')
  .meta({ id: 'TimeZone', enum: [...TIMEZONES].sort() });

export const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: z.string().max(255).optional(),
});

export const page = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), nextCursor: z.string().nullable() });
