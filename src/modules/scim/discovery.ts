// SCIM discovery (RFC 7644 4): what this service provider supports, the resource types and their schemas.
import { z } from 'zod';
import { MAX_COUNT } from './common.js';
import { GROUP_EXTENSION, GROUP_SCHEMA, USER_SCHEMA } from './schemas.js';

const SPC = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RESOURCE_TYPE = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

export const serviceProviderConfig = (publicUrl: string) => ({
  schemas: [SPC],
  documentationUri: `${publicUrl}/docs`,
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: MAX_COUNT },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: true },
  authenticationSchemes: [
    {
      type: 'oauthbearertoken',
      name: 'SCIM bearer token',
      description: 'A token from POST /api/v1/scim-tokens (ghscim_…), as Authorization: Bearer.',
      primary: true,
    },
  ],
  meta: { resourceType: 'ServiceProviderConfig', location: `${publicUrl}/scim/v2/ServiceProviderConfig` },
});

export const resourceTypes = (publicUrl: string) => [
  {
    schemas: [RESOURCE_TYPE],
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    description: 'A member of the token’s tenant',
    schema: USER_SCHEMA,
    meta: { resourceType: 'ResourceType', location: `${publicUrl}/scim/v2/ResourceTypes/User` },
  },
  {
    schemas: [RESOURCE_TYPE],
    id: 'Group',
    name: 'Group',
    endpoint: '/Groups',
    description: 'A group of the tenant’s users, optionally mapped to a role',
    schema: GROUP_SCHEMA,
    schemaExtensions: [{ schema: GROUP_EXTENSION, required: false }],
    meta: { resourceType: 'ResourceType', location: `${publicUrl}/scim/v2/ResourceTypes/Group` },
  },
];

const attr = (name: string, type: string, extra: Record<string, unknown> = {}) => ({
  name,
  type,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

export const schemas = (publicUrl: string) => [
  {
    schemas: [SCHEMA],
    id: USER_SCHEMA,
    name: 'User',
    description: 'User account',
    attributes: [
      attr('userName', 'string', { required: true, uniqueness: 'server' }),
      attr('name', 'complex', {
        subAttributes: [attr('givenName', 'string'), attr('familyName', 'string'), attr('formatted', 'string')],
      }),
      attr('displayName', 'string'),
      attr('emails', 'complex', {
        multiValued: true,
        subAttributes: [
          attr('value', 'string'),
          attr('type', 'string', { canonicalValues: ['work', 'home', 'other'] }),
          attr('primary', 'boolean'),
        ],
      }),
      attr('active', 'boolean'),
      attr('groups', 'complex', {
        multiValued: true,
        mutability: 'readOnly',
        subAttributes: [
          attr('value', 'string', { mutability: 'readOnly' }),
          attr('display', 'string', { mutability: 'readOnly' }),
          attr('$ref', 'reference', { mutability: 'readOnly' }),
        ],
      }),
    ],
    meta: { resourceType: 'Schema', location: `${publicUrl}/scim/v2/Schemas/${USER_SCHEMA}` },
  },
  {
    schemas: [SCHEMA],
    id: GROUP_SCHEMA,
    name: 'Group',
    description: 'Group',
    attributes: [
      attr('displayName', 'string', { required: true, uniqueness: 'server' }),
      attr('members', 'complex', {
        multiValued: true,
        subAttributes: [
          attr('value', 'string', { mutability: 'immutable' }),
          attr('display', 'string', { mutability: 'readOnly' }),
          attr('$ref', 'reference', { mutability: 'immutable' }),
        ],
      }),
    ],
    meta: { resourceType: 'Schema', location: `${publicUrl}/scim/v2/Schemas/${GROUP_SCHEMA}` },
  },
  {
    schemas: [SCHEMA],
    id: GROUP_EXTENSION,
    name: 'GatehouseGroup',
    description:
      'Maps a group to a role of the tenant: its members hold that role (within the token creator’s permissions)',
    attributes: [attr('roleId', 'string', { caseExact: true })],
    meta: { resourceType: 'Schema', location: `${publicUrl}/scim/v2/Schemas/${GROUP_EXTENSION}` },
  },
];

export const listOf = <T>(items: T[]) => ({
  schemas: [LIST],
  totalResults: items.length,
  startIndex: 1,
  itemsPerPage: items.length,
  Resources: items,
});

/** Discovery documents are fixed data: declared loosely (their shape is RFC 7643's, not ours to restate field by field). */
export const discoveryJson = z.looseObject({ schemas: z.array(z.string()) });
