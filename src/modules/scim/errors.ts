// SCIM's error schema (RFC 7644 3.12) over the one catalogue: the same codes, answered with `schemas`, `status` (a
// string), `scimType` and `detail` beside the envelope's `error`, `message` and `code`.
import { z } from 'zod';
import { ERROR_CATALOG, type ErrorCode } from '../../http/errors.js';
import type { ErrorFormat } from '../../http/error-handler.js';

export const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SCIM_MEDIA_TYPE = 'application/scim+json';

const SCIM_TYPES: Partial<Record<ErrorCode, string>> = {
  validation_failed: 'invalidValue',
  invalid_json: 'invalidSyntax',
  json_too_deep: 'invalidSyntax',
  invalid_filter: 'invalidFilter',
  invalid_patch_path: 'invalidPath',
  patch_no_target: 'noTarget',
  attribute_immutable: 'mutability',
  user_exists_in_scope: 'uniqueness',
  email_taken: 'uniqueness',
  name_taken: 'uniqueness',
  conflict: 'uniqueness',
};

export const scimErrorFormat: ErrorFormat = (status, body) => {
  // A body that is not JSON at all is a form error without fields: its structure, not a value, is wrong.
  const details = body.details as { fieldErrors?: object } | undefined;
  const unreadable =
    body.code === 'validation_failed' &&
    details?.fieldErrors !== undefined &&
    Object.keys(details.fieldErrors).length === 0;
  const scimType = unreadable ? 'invalidSyntax' : SCIM_TYPES[body.code as ErrorCode];
  return {
    contentType: SCIM_MEDIA_TYPE,
    body: {
      schemas: [SCIM_ERROR],
      status: String(status),
      ...(scimType ? { scimType } : {}),
      detail: body.message,
      ...body,
    },
  };
};

export const scimError = z
  .looseObject({
    schemas: z.array(z.literal(SCIM_ERROR)),
    status: z.string().meta({ description: 'The HTTP status, as a string (RFC 7644 3.12).', examples: ['409'] }),
    scimType: z
      .string()
      .optional()
      .meta({ enum: [...new Set(Object.values(SCIM_TYPES))], description: 'The SCIM error type, where one applies.' }),
    detail: z.string(),
    error: z.string().meta({ description: 'Short text of the HTTP status (the Gatehouse envelope).' }),
    message: z.string().meta({ description: 'Same as detail.' }),
    code: z
      .string()
      .meta({ enum: Object.keys(ERROR_CATALOG), description: 'The catalogued reason (src/http/errors.ts).' }),
    errorId: z
      .string()
      .optional()
      .meta({ description: 'On 5xx: the id of the server log line of this failure.', format: 'uuid' }),
    retryAfter: z.number().optional().meta({ type: 'integer', minimum: 0 }),
  })
  .meta({
    id: 'ScimError',
    description:
      'Every non-2xx answer under /scim/v2: the SCIM error schema (RFC 7644 3.12) carrying the Gatehouse envelope’s fields too.',
    examples: [
      {
        schemas: [SCIM_ERROR],
        status: '409',
        scimType: 'uniqueness',
        detail: 'User already exists in this scope.',
        error: 'Conflict',
        message: 'User already exists in this scope.',
        code: 'user_exists_in_scope',
      },
    ],
  });

/** SCIM error answers a route may give, for the OpenAPI document (content type application/scim+json). */
export const scimErrors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, scimError]));
