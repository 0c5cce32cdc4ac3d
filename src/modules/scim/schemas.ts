// SCIM 2.0 resources on the wire (RFC 7643): what the identity provider sends (loose: unknown attributes such as
// Okta's `password` or Entra's enterprise extension are accepted and ignored, never stored) and what we answer.
import { z } from 'zod';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
/** Gatehouse's Group extension: `roleId` maps the group to a role of the tenant. */
export const GROUP_EXTENSION = 'urn:gatehouse:params:scim:schemas:extension:2.0:Group';

/** Entra ID sends booleans as "True" / "False" in PATCH values; both spellings are accepted everywhere. */
export const scimBoolean = z.union([
  z.boolean(),
  z.enum(['true', 'false', 'True', 'False', 'TRUE', 'FALSE']).transform((v) => v.toLowerCase() === 'true'),
]);
const text = z.string().trim().max(255);

export const scimEmail = z.looseObject({
  value: z.string().trim().min(1).max(255),
  type: z.string().trim().max(32).optional(),
  primary: scimBoolean.optional(),
});

export const scimUserInput = z
  .looseObject({
    schemas: z.array(z.string().max(255)).max(10).optional(),
    id: z
      .string()
      .max(100)
      .optional()
      .describe('Ignored on create; on replace it must be the resource’s own (400 mutability)'),
    userName: text.min(1).describe('Unique in the tenant, case-insensitive'),
    externalId: text.nullable().optional().describe('The identity provider’s id; unique in the tenant'),
    displayName: text.nullable().optional(),
    name: z
      .looseObject({
        givenName: text.nullable().optional(),
        familyName: text.nullable().optional(),
        formatted: z.string().max(512).nullable().optional(),
      })
      .nullable()
      .optional(),
    emails: z
      .array(scimEmail)
      .max(20)
      .optional()
      .describe(
        'The primary (else work, else first) e-mail is the account’s; userName when it is an e-mail and none is given',
      ),
    active: scimBoolean
      .optional()
      .describe('false: the membership is suspended and the user’s sessions here are revoked at once'),
  })
  .meta({ id: 'ScimUserRequest' });
export type ScimUserInput = z.infer<typeof scimUserInput>;

export const scimGroupInput = z
  .looseObject({
    schemas: z.array(z.string().max(255)).max(10).optional(),
    id: z.string().max(100).optional(),
    displayName: text.min(1).describe('Unique in the tenant, case-insensitive'),
    externalId: text.nullable().optional(),
    members: z
      .array(
        z.looseObject({
          value: z.string().max(100),
          display: z.string().max(512).nullable().optional(),
          type: z.string().max(32).optional(),
        }),
      )
      .max(1000)
      .optional(),
    [GROUP_EXTENSION]: z
      .looseObject({
        roleId: z
          .uuid()
          .nullable()
          .optional()
          .describe('Members hold this role of the tenant (within the token creator’s permissions); null: no mapping'),
      })
      .nullable()
      .optional(),
  })
  .meta({ id: 'ScimGroupRequest' });
export type ScimGroupInput = z.infer<typeof scimGroupInput>;

export const patchBody = z.looseObject({
  schemas: z.array(z.string().max(255)).max(10).optional(),
  Operations: z
    .array(
      z.looseObject({
        op: z
          .string()
          .regex(/^(add|remove|replace)$/i)
          .describe('add, remove or replace, any case (Entra ID capitalises)'),
        path: z.string().min(1).max(1024).optional(),
        value: z.unknown().optional(),
      }),
    )
    .min(1)
    .max(100),
});
export type PatchBody = z.infer<typeof patchBody>;

export const listQuery = z.object({
  filter: z
    .string()
    .max(2048)
    .optional()
    .describe(
      'userName, externalId, id, displayName, name.givenName, name.familyName, emails (with [type eq "work"] and .value), active, meta.created, meta.lastModified; Groups: displayName, externalId, id, members.value. eq ne co sw ew gt ge lt le pr, and, or, not',
    ),
  startIndex: z.coerce.number().int().min(-1e9).max(1e9).optional().describe('1-based; below 1 is 1'),
  count: z.coerce.number().int().min(-1e9).max(1e9).optional().describe('0..200 (larger asks get 200)'),
  attributes: z.string().max(1024).optional(),
  excludedAttributes: z.string().max(1024).optional(),
});
export const getQuery = listQuery.pick({ attributes: true, excludedAttributes: true });

export const resourceId = z.object({ id: z.string().min(1).max(100) });

const ts = z.string().meta({ format: 'date-time' });
const meta = z.object({
  resourceType: z.string(),
  created: ts,
  lastModified: ts,
  location: z.string(),
  version: z.string().describe('The ETag: W/"<n>"'),
});

export const scimUserJson = z
  .object({
    schemas: z.array(z.string()),
    id: z.string(),
    externalId: z.string().optional(),
    userName: z.string().optional(),
    displayName: z.string().optional(),
    name: z
      .object({ givenName: z.string().optional(), familyName: z.string().optional(), formatted: z.string().optional() })
      .optional(),
    emails: z
      .array(z.object({ value: z.string(), type: z.string().optional(), primary: z.boolean().optional() }))
      .optional(),
    active: z.boolean().optional(),
    groups: z.array(z.object({ value: z.string(), display: z.string(), $ref: z.string() })).optional(),
    meta: meta.optional(),
  })
  .meta({ id: 'ScimUser' });

export const scimGroupJson = z
  .object({
    schemas: z.array(z.string()),
    id: z.string(),
    externalId: z.string().optional(),
    displayName: z.string().optional(),
    members: z
      .array(z.object({ value: z.string(), display: z.string(), $ref: z.string(), type: z.literal('User') }))
      .optional(),
    [GROUP_EXTENSION]: z.object({ roleId: z.string().nullable() }).optional(),
    meta: meta.optional(),
  })
  .meta({ id: 'ScimGroup' });

export const listResponse = <T extends z.ZodType>(item: T, id: string) =>
  z
    .object({
      schemas: z.array(z.string()).describe(LIST_RESPONSE),
      totalResults: z.number().int(),
      startIndex: z.number().int(),
      itemsPerPage: z.number().int(),
      Resources: z.array(item),
    })
    .meta({ id });
