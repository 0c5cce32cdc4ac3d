// Every `:id` route outside /users and /roles as data: how to make a record of its kind in a given
// organisation and site, and a request that would succeed on it. The walk test (by-id.test.ts) proves each one
// against each kind of caller, and that no `:id` route is missing here.
import { randomBytes, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import {
  configItems,
  customFieldDefinitions,
  deviceGroups,
  domains,
  enrollmentKeys,
  organizations,
  scimTokens,
  scripts,
  serviceAccountKeys,
  serviceAccounts,
  ssoProviders,
  webhooks,
} from '../../src/db/schema/index.js';
import { newApiKey } from '../../src/modules/service-accounts/key-format.js';
import { ORG_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { sealSecret } from '../../src/modules/webhooks/sender.js';
import type { TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import { createContact, createDevice, createDeviceGroup, createSite } from '../support/fixtures.js';

export interface Place {
  partnerId: string;
  orgId: string;
  siteId: string;
}

export interface ByIdCase {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** As registered, without /api/v1. */
  url: string;
  /** A fresh record of the route's kind in the place (the organisation itself for /orgs/organizations). */
  make(t: TestApp, at: Place): Promise<string>;
  call(api: ApiClient, id: string, query: Record<string, string>, t: TestApp): Promise<ApiResponse>;
  /** The resource has a site: a member restricted to another site must not reach it. */
  sited: boolean;
  /** The record is a fresh site (outside every site restriction), not the place's own. */
  freshSite?: true;
}

const tag = () => randomBytes(4).toString('hex');
const theSite = async (_t: TestApp, at: Place) => at.siteId;
const freshSite = (t: TestApp, at: Place) => createSite(t, at.orgId).then((s) => s.id);
const group = (t: TestApp, at: Place) => createDeviceGroup(t, at.orgId, { siteId: at.siteId }).then((g) => g.id);
const device = (t: TestApp, at: Place) => createDevice(t, { id: at.orgId }, at.siteId).then((d) => d.id);
const contact = (t: TestApp, at: Place) => createContact(t, at.orgId, { siteId: at.siteId }).then((c) => c.id);
const key = async (t: TestApp, at: Place) =>
  (
    await t.deps.db
      .insert(enrollmentKeys)
      .values({
        orgId: at.orgId,
        siteId: at.siteId,
        name: `key ${tag()}`,
        keyHash: tag(),
        expiresAt: new Date(Date.now() + 86_400_000),
      })
      .returning()
  )[0]!.id;
const script = async (t: TestApp, at: Place) =>
  (
    await t.deps.db
      .insert(scripts)
      .values({
        partnerId: at.partnerId,
        orgId: at.orgId,
        name: `script ${tag()}`,
        language: 'bash',
        content: 'echo hi',
        availability: 'organization',
      })
      .returning()
  )[0]!.id;
const field = async (t: TestApp, at: Place) =>
  (
    await t.deps.db
      .insert(customFieldDefinitions)
      .values({
        partnerId: at.partnerId,
        orgId: at.orgId,
        key: `k${tag()}`,
        name: 'Field',
        type: 'text',
        entityType: 'device',
      })
      .returning()
  )[0]!.id;
const item = async (t: TestApp, at: Place) =>
  (
    await t.deps.db
      .insert(configItems)
      .values({ partnerId: at.partnerId, orgId: at.orgId, kind: 'policy', name: `item ${tag()}` })
      .returning()
  )[0]!.id;
const provider = async (t: TestApp, at: Place) =>
  (
    await t.deps.db
      .insert(ssoProviders)
      .values({
        partnerId: at.partnerId,
        orgId: at.orgId,
        name: `idp ${tag()}`,
        issuer: 'http://127.0.0.1:9/none',
        clientId: 'gatehouse',
      })
      .returning()
  )[0]!.id;
/** An organisation's proven domain (a proven one: verifying it again answers 200 with no DNS lookup). */
const domain = async (t: TestApp, at: Place) =>
  (
    await t.deps.db
      .insert(domains)
      .values({
        partnerId: at.partnerId,
        orgId: at.orgId,
        domain: `by-id-${tag()}.example.com`,
        status: 'verified',
        verifiedAt: new Date(),
        txtValue: `gatehouse-verification=${tag()}`,
      })
      .returning()
  )[0]!.id;
/** An organisation's audit webhook on a loopback URL: the outbound guard refuses it at once (no request leaves). */
const webhook = async (t: TestApp, at: Place) => {
  const id = randomUUID();
  await t.deps.db.insert(webhooks).values({
    id,
    partnerId: at.partnerId,
    orgId: at.orgId,
    url: 'https://127.0.0.1:9/hook',
    events: ['nothing.'],
    secretSealed: sealSecret(t.deps.box, id, 'whsec_dGVzdA=='),
  });
  return id;
};
/** An organisation's service account (Organization Admin role: within every caller's ceiling here), and a key of it. */
const serviceAccount = async (t: TestApp, at: Place) =>
  (
    await t.deps.db
      .insert(serviceAccounts)
      .values({
        clientId: `sa_${tag()}${tag()}`,
        partnerId: at.partnerId,
        orgId: at.orgId,
        name: `sa ${tag()}`,
        roleId: ORG_ADMIN_ROLE_ID,
      })
      .returning()
  )[0]!.id;
const scimToken = async (t: TestApp, at: Place) =>
  (
    await t.deps.db
      .insert(scimTokens)
      .values({
        partnerId: at.partnerId,
        orgId: at.orgId,
        name: `idp ${tag()}`,
        tokenHash: randomBytes(32).toString('hex'),
        hint: 'ghscim_test',
        defaultRoleId: ORG_ADMIN_ROLE_ID,
      })
      .returning()
  )[0]!.id;
const apiKeyOf = async (t: TestApp, accountId: string) => {
  const k = newApiKey('test');
  await t.deps.db.insert(serviceAccountKeys).values({
    id: k.id,
    serviceAccountId: accountId,
    prefix: k.prefix,
    environment: 'test',
    keyHash: k.hash,
    name: `key ${tag()}`,
  });
  return k.id;
};
/** Organisation routes act on the organisation itself; deleting needs one nobody else uses. */
const theOrg = async (_t: TestApp, at: Place) => at.orgId;
const freshOrg = async (t: TestApp, at: Place) =>
  (
    await t.deps.db
      .insert(organizations)
      .values({ partnerId: at.partnerId, name: `Org ${tag()}`, slug: `org-${tag()}` })
      .returning()
  )[0]!.id;

const q = (query: Record<string, string>) => ({ query });

export const BY_ID_CASES: ByIdCase[] = [
  {
    method: 'GET',
    url: '/orgs/organizations/:id',
    make: theOrg,
    sited: false,
    call: (api, id, query) => api.get(`/orgs/organizations/${id}`, q(query)),
  },
  {
    method: 'PATCH',
    url: '/orgs/organizations/:id',
    make: theOrg,
    sited: false,
    call: (api, id, query) => api.patch(`/orgs/organizations/${id}`, { name: `Renamed ${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/orgs/organizations/:id',
    make: freshOrg,
    sited: false,
    call: (api, id, query) => api.delete(`/orgs/organizations/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/orgs/organizations/:id/effective-settings',
    make: theOrg,
    sited: false,
    call: (api, id, query) => api.get(`/orgs/organizations/${id}/effective-settings`, q(query)),
  },
  {
    method: 'GET',
    url: '/orgs/organizations/:id/partner-access',
    make: theOrg,
    sited: false,
    call: (api, id, query) => api.get(`/orgs/organizations/${id}/partner-access`, q(query)),
  },
  {
    method: 'GET',
    url: '/orgs/organizations/:id/partner-activity',
    make: theOrg,
    sited: false,
    call: (api, id, query) => api.get(`/orgs/organizations/${id}/partner-activity`, q(query)),
  },
  {
    method: 'GET',
    url: '/orgs/sites/:id',
    make: theSite,
    sited: true,
    call: (api, id, query) => api.get(`/orgs/sites/${id}`, q(query)),
  },
  {
    method: 'PATCH',
    url: '/orgs/sites/:id',
    make: theSite,
    sited: true,
    call: (api, id, query) => api.patch(`/orgs/sites/${id}`, { name: `Site ${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/orgs/sites/:id',
    make: freshSite,
    sited: true,
    freshSite: true,
    call: (api, id, query) => api.delete(`/orgs/sites/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/device-groups/:id',
    make: group,
    sited: true,
    call: (api, id, query) => api.get(`/device-groups/${id}`, q(query)),
  },
  {
    method: 'PATCH',
    url: '/device-groups/:id',
    make: group,
    sited: true,
    call: (api, id, query) => api.patch(`/device-groups/${id}`, { name: `Group ${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/device-groups/:id',
    make: group,
    sited: true,
    call: (api, id, query) => api.delete(`/device-groups/${id}`, q(query)),
  },
  {
    method: 'POST',
    url: '/device-groups/:id/devices',
    make: group,
    sited: true,
    call: async (api, id, query, t) =>
      api.post(`/device-groups/${id}/devices`, { deviceIds: [await deviceNextTo(t, id)] }, q(query)),
  },
  {
    method: 'GET',
    url: '/devices/:id',
    make: device,
    sited: true,
    call: (api, id, query) => api.get(`/devices/${id}`, q(query)),
  },
  {
    method: 'PATCH',
    url: '/devices/:id',
    make: device,
    sited: true,
    call: (api, id, query) => api.patch(`/devices/${id}`, { name: `pc-${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/devices/:id',
    make: device,
    sited: true,
    call: (api, id, query) => api.delete(`/devices/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/enrollment-keys/:id',
    make: key,
    sited: true,
    call: (api, id, query) => api.get(`/enrollment-keys/${id}`, q(query)),
  },
  {
    method: 'DELETE',
    url: '/enrollment-keys/:id',
    make: key,
    sited: true,
    call: (api, id, query) => api.delete(`/enrollment-keys/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/contacts/:id',
    make: contact,
    sited: false,
    call: (api, id, query) => api.get(`/contacts/${id}`, q(query)),
  },
  {
    method: 'PATCH',
    url: '/contacts/:id',
    make: contact,
    sited: false,
    call: (api, id, query) => api.patch(`/contacts/${id}`, { title: `T ${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/contacts/:id',
    make: contact,
    sited: false,
    call: (api, id, query) => api.delete(`/contacts/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/scripts/:id',
    make: script,
    sited: false,
    call: (api, id, query) => api.get(`/scripts/${id}`, q(query)),
  },
  {
    method: 'PATCH',
    url: '/scripts/:id',
    make: script,
    sited: false,
    call: (api, id, query) => api.patch(`/scripts/${id}`, { name: `script ${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/scripts/:id',
    make: script,
    sited: false,
    call: (api, id, query) => api.delete(`/scripts/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/custom-fields/:id',
    make: field,
    sited: false,
    call: (api, id, query) => api.get(`/custom-fields/${id}`, q(query)),
  },
  {
    method: 'PATCH',
    url: '/custom-fields/:id',
    make: field,
    sited: false,
    call: (api, id, query) => api.patch(`/custom-fields/${id}`, { name: `Field ${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/custom-fields/:id',
    make: field,
    sited: false,
    call: (api, id, query) => api.delete(`/custom-fields/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/config-items/:id',
    make: item,
    sited: false,
    call: (api, id, query) => api.get(`/config-items/${id}`, q(query)),
  },
  {
    method: 'PATCH',
    url: '/config-items/:id',
    make: item,
    sited: false,
    call: (api, id, query) => api.patch(`/config-items/${id}`, { name: `item ${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/config-items/:id',
    make: item,
    sited: false,
    call: (api, id, query) => api.delete(`/config-items/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/sso/providers/:id',
    make: provider,
    sited: false,
    call: (api, id, query) => api.get(`/sso/providers/${id}`, q(query)),
  },
  {
    method: 'PATCH',
    url: '/sso/providers/:id',
    make: provider,
    sited: false,
    call: (api, id, query) => api.patch(`/sso/providers/${id}`, { name: `idp ${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/sso/providers/:id',
    make: provider,
    sited: false,
    call: (api, id, query) => api.delete(`/sso/providers/${id}`, q(query)),
  },
  {
    method: 'POST',
    url: '/sso/providers/:id/status',
    make: provider,
    sited: false,
    call: (api, id, query) => api.post(`/sso/providers/${id}/status`, { status: 'testing' }, q(query)),
  },
  {
    method: 'POST',
    url: '/sso/providers/:id/test',
    make: provider,
    sited: false,
    call: (api, id, query) => api.post(`/sso/providers/${id}/test`, undefined, q(query)),
  },
  {
    method: 'POST',
    url: '/domains/:id/verify',
    make: domain,
    sited: false,
    call: (api, id, query) => api.post(`/domains/${id}/verify`, {}, q(query)),
  },
  {
    method: 'DELETE',
    url: '/domains/:id',
    make: domain,
    sited: false,
    call: (api, id, query) => api.delete(`/domains/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/webhooks/:id',
    make: webhook,
    sited: false,
    call: (api, id, query) => api.get(`/webhooks/${id}`, q(query)),
  },
  {
    method: 'PATCH',
    url: '/webhooks/:id',
    make: webhook,
    sited: false,
    call: (api, id, query) => api.patch(`/webhooks/${id}`, { description: `d ${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/webhooks/:id',
    make: webhook,
    sited: false,
    call: (api, id, query) => api.delete(`/webhooks/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/webhooks/:id/deliveries',
    make: webhook,
    sited: false,
    call: (api, id, query) => api.get(`/webhooks/${id}/deliveries`, q(query)),
  },
  {
    method: 'POST',
    url: '/webhooks/:id/redeliver',
    make: webhook,
    sited: false,
    call: (api, id, query) => api.post(`/webhooks/${id}/redeliver`, {}, q(query)),
  },
  {
    method: 'POST',
    url: '/webhooks/:id/ping',
    make: webhook,
    sited: false,
    call: (api, id, query) => api.post(`/webhooks/${id}/ping`, undefined, q(query)),
  },
  {
    method: 'DELETE',
    url: '/scim-tokens/:id',
    make: scimToken,
    sited: false,
    call: (api, id, query) => api.delete(`/scim-tokens/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/service-accounts/:id',
    make: serviceAccount,
    sited: false,
    call: (api, id, query) => api.get(`/service-accounts/${id}`, q(query)),
  },
  {
    method: 'PATCH',
    url: '/service-accounts/:id',
    make: serviceAccount,
    sited: false,
    call: (api, id, query) => api.patch(`/service-accounts/${id}`, { description: `d ${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/service-accounts/:id',
    make: serviceAccount,
    sited: false,
    call: (api, id, query) => api.delete(`/service-accounts/${id}`, q(query)),
  },
  {
    method: 'GET',
    url: '/service-accounts/:id/keys',
    make: serviceAccount,
    sited: false,
    call: (api, id, query) => api.get(`/service-accounts/${id}/keys`, q(query)),
  },
  {
    method: 'POST',
    url: '/service-accounts/:id/keys',
    make: serviceAccount,
    sited: false,
    call: (api, id, query) => api.post(`/service-accounts/${id}/keys`, { name: `key ${tag()}` }, q(query)),
  },
  {
    method: 'DELETE',
    url: '/service-accounts/:id/keys/:keyId',
    make: serviceAccount,
    sited: false,
    call: async (api, id, query, t) => api.delete(`/service-accounts/${id}/keys/${await apiKeyOf(t, id)}`, q(query)),
  },
];

/** A device in the group's organisation and site (for adding devices to a group). */
export async function deviceNextTo(t: TestApp, groupId: string): Promise<string> {
  const [g] = await t.deps.db.select().from(deviceGroups).where(eq(deviceGroups.id, groupId));
  return (await createDevice(t, { id: g!.orgId }, g!.siteId!)).id;
}

/**
 * `:id` routes that name no tenant record: the caller's own passkeys, and the /users and /roles routes. Just-in-time
 * requests and grants (`/access/`) are a person's records about an organisation the requester may not reach yet: their
 * rule is the requester's own or the named approver's, not the scope's (proven in test/access/jit.test.ts, other
 * partners and organisations included).
 */
export const NOT_BY_TENANT = (url: string) =>
  url.startsWith('/users/') ||
  url.startsWith('/roles/') ||
  url.startsWith('/auth/') ||
  url.startsWith('/access/') ||
  // A relationship is seen by its partner and its organisation whatever the caller reaches (test/relationships).
  url.startsWith('/relationships/') ||
  // An access group is a partner's own, no organisation's (test/relationships/access-groups.test.ts walks two partners).
  url.startsWith('/access-groups/') ||
  // A freeze changes what every other case here may do (test/governor walks who may set and lift it, across partners);
  // a co-sign request is the partner's, approved only by its admins (test/governor).
  url.endsWith('/freeze') ||
  url.startsWith('/governor/');
