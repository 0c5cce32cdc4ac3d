import { z } from 'zod';

const name = z.string().trim().min(1).max(255);
const description = z.string().trim().max(2000);
const ts = z.string().meta({ format: 'date-time' });

export const serviceAccountJson = z
  .object({
    id: z.uuid(),
    clientId: z.string().describe('OAuth client_id for POST /oauth/token (client_credentials); not a secret'),
    partnerId: z.uuid(),
    orgId: z.uuid().nullable().describe('null: the partner’s own service account'),
    name: z.string(),
    description: z.string().nullable(),
    roleId: z.uuid(),
    roleName: z.string(),
    disabled: z.boolean(),
    activeKeyCount: z.number().int().describe('Keys neither revoked nor expired (at most two)'),
    createdAt: ts,
    updatedAt: ts,
  })
  .meta({
    id: 'ServiceAccount',
    examples: [
      {
        id: '5c0b7d7e-2f55-4b8e-9a49-3f0b7b1f2c11',
        clientId: 'sa_4Xk9PqR2mT7vLw3ZbN8cYd1e',
        partnerId: '8d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6',
        orgId: null,
        name: 'PSA sync',
        description: 'Ticketing integration',
        roleId: '00000000-0000-4000-8000-000000000003',
        roleName: 'Partner Viewer',
        disabled: false,
        activeKeyCount: 1,
        createdAt: '2026-03-01T12:00:00.000Z',
        updatedAt: '2026-03-01T12:00:00.000Z',
      },
    ],
  });

export const createServiceAccountBody = z
  .strictObject({
    orgId: z
      .uuid()
      .optional()
      .describe('A partner caller names the organisation the account belongs to; omitted = the partner itself'),
    name,
    roleId: z.uuid(),
    description: description.optional(),
  })
  .meta({
    examples: [
      { name: 'PSA sync', roleId: '00000000-0000-4000-8000-000000000003', description: 'Ticketing integration' },
    ],
  });

export const updateServiceAccountBody = z
  .strictObject({
    name: name.optional(),
    roleId: z.uuid().optional(),
    description: description.nullable().optional(),
    disabled: z.boolean().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .meta({ minProperties: 1 });

export const serviceAccountListQuery = z.strictObject({
  orgId: z
    .uuid()
    .optional()
    .describe("A partner caller lists an organisation's service accounts; omitted = the partner's own"),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: z.string().max(255).optional().describe('Prefix of the name'),
});

export const apiKeyJson = z
  .object({
    id: z.uuid(),
    serviceAccountId: z.uuid(),
    name: z.string(),
    prefix: z.string().describe('The non-secret start of the key (`gh_<environment>_<id prefix>`), to tell keys apart'),
    createdAt: ts,
    expiresAt: ts.nullable(),
    allowedCidrs: z.array(z.string()).describe('Blocks the key may be used from; empty = anywhere'),
    lastUsedAt: ts.nullable().describe('Updated at most once a minute'),
    lastUsedIp: z.string().nullable(),
    revokedAt: ts.nullable(),
    active: z.boolean().describe('Neither revoked nor expired'),
  })
  .meta({ id: 'ApiKey' });

export const createdApiKey = apiKeyJson.extend({
  key: z
    .string()
    .describe('`gh_<environment>_<id prefix>_<secret>`: shown once, never again (only its SHA-256 is stored)'),
});

const cidr = z.string().trim().min(3).max(64).describe('IPv4 (`203.0.113.0/24`) or IPv6 (`2001:db8::/32`) block');

export const createApiKeyBody = z
  .strictObject({
    name,
    expiresAt: z.iso.datetime({ offset: true }).optional().describe('Omitted = the key does not expire'),
    allowedCidrs: z.array(cidr).max(50).optional(),
  })
  .meta({
    examples: [
      {
        name: 'rotation 2026-03',
        expiresAt: '2027-03-01T00:00:00Z',
        allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'],
      },
    ],
  });

export const keyListQuery = z.strictObject({
  orgId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
});

export const keyParams = z.strictObject({ id: z.uuid(), keyId: z.uuid() });

/** RFC 6749 4.4 / 2.3.1: form fields; client credentials here or in the Basic header. Other fields are ignored (RFC 6749 3.2). */
export const tokenRequestBody = z
  .looseObject({
    grant_type: z.string().max(100).optional(),
    client_id: z.string().max(200).optional(),
    client_secret: z.string().max(200).optional(),
    scope: z.string().max(1000).optional(),
  })
  .meta({
    examples: [
      {
        grant_type: 'client_credentials',
        client_id: 'sa_4Xk9PqR2mT7vLw3ZbN8cYd1e',
        client_secret: 'gh_live_5c0b7d7e2f55_…',
      },
    ],
  });

export const tokenResponse = z.object({
  access_token: z.string().describe('Access-token JWT as a sign-in issues, sub = the service account, with client_id'),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
});
