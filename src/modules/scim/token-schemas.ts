// The management side of SCIM: bearer tokens under /api/v1/scim-tokens.
import { z } from 'zod';
import { listQuery } from '../../http/schemas.js';

const ts = z.string().meta({ format: 'date-time' });

export const createScimTokenBody = z.strictObject({
  orgId: z
    .uuid()
    .optional()
    .describe('A partner caller names the organisation the token provisions into; omitted = the partner’s own staff'),
  name: z.string().trim().min(1).max(255).describe('Which identity provider or connector uses it'),
  defaultRoleId: z
    .uuid()
    .describe(
      'The role a provisioned user holds until a mapped group gives another: a role of the scope, within what you hold, never one with *:*',
    ),
  sendInvitations: z
    .boolean()
    .optional()
    .describe(
      'Mail a new account an invitation to set a password (default true); false when the tenant signs in by SSO only',
    ),
});

export const scimTokenJson = z
  .object({
    id: z.uuid(),
    partnerId: z.uuid(),
    orgId: z.uuid().nullable().describe('null: provisions the partner’s own staff'),
    name: z.string(),
    hint: z.string().describe('The first characters of the token, to tell tokens apart; never enough to use it'),
    defaultRoleId: z.uuid(),
    defaultRoleName: z.string(),
    sendInvitations: z.boolean(),
    createdAt: ts,
    lastUsedAt: ts.nullable().describe('Written at most once a minute'),
    revokedAt: ts.nullable(),
  })
  .meta({ id: 'ScimToken' });

export const createdScimToken = scimTokenJson
  .extend({
    token: z
      .string()
      .describe(
        '`ghscim_` + 256-bit secret, shown once: give it to the identity provider as the SCIM bearer token. Only its SHA-256 is kept.',
      ),
  })
  .meta({ id: 'CreatedScimToken' });

export const scimTokenListQuery = listQuery.omit({ search: true }).extend({ orgId: z.uuid().optional() });
