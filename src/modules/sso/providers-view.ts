// SSO providers as read: one provider of the tenant, the list, their JSON, and the sealed client secret opened.
import { openAs } from '../../db/sealed-catalogue.js';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { notFound } from '../../http/errors.js';
import { provenAmong } from '../domains/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { findOwnedProvider, listOwnedProviders, type ProviderRow } from './repo.js';
import { acsUrl, spMetadataUrl } from './saml.js';

type Row = ProviderRow;

/** What an administrator registers at a SAML IdP, and what was read from its metadata. */
const samlJson = (deps: Deps, r: Row) =>
  r.type === 'saml'
    ? {
        entityId: spMetadataUrl(deps, r.id),
        acsUrl: acsUrl(deps),
        spMetadataUrl: spMetadataUrl(deps, r.id),
        metadataUrl: r.metadataUrl,
        ssoUrl: r.idpSsoUrl ?? '',
        emailAttribute: r.emailAttribute,
        nameAttribute: r.nameAttribute,
      }
    : {};

export const providerToJson = (deps: Deps, r: Row) => ({
  id: r.id,
  orgId: r.orgId,
  partnerId: r.partnerId,
  name: r.name,
  type: r.type,
  status: r.status,
  issuer: r.issuer,
  clientId: r.clientId,
  hasClientSecret: Boolean(r.clientSecret),
  scopes: r.scopes,
  autoProvision: r.autoProvision,
  defaultRoleId: r.defaultRoleId,
  allowedDomains: r.allowedDomains,
  enforceSSO: r.enforceSso,
  trustIdpMfa: r.trustIdpMfa,
  lastTestedAt: r.lastTestedOkAt?.toISOString() ?? null,
  ...samlJson(deps, r),
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

/** The provider's allowedDomains, one by one (lower-case, as domains are stored). */
const listedDomains = (r: Row) => [
  ...new Set(
    r.allowedDomains
      .split(',')
      .map((d) => d.trim().toLowerCase())
      .filter(Boolean),
  ),
];

/**
 * The provider as read, with each domain it lists flagged proven or not by the provider's own tenant: discovery,
 * auto-provisioning and enforcement act only on proven ones.
 */
export async function providerWithDomains(deps: Deps, r: Row, ex: Executor = deps.db) {
  const names = listedDomains(r);
  const proven = await provenAmong(ex, { partnerId: r.partnerId, orgId: r.orgId }, names);
  return { ...providerToJson(deps, r), domains: names.map((domain) => ({ domain, proven: proven.has(domain) })) };
}

export async function findProvider(db: Executor, t: Target, id: string): Promise<Row> {
  const row = await findOwnedProvider(db, t, id);
  if (!row) throw notFound('SSO provider');
  return row;
}

export async function listProviders(deps: Deps, t: Target) {
  const rows = await listOwnedProviders(deps.db, t);
  return { data: await Promise.all(rows.map((r) => providerWithDomains(deps, r))), nextCursor: null };
}

export const openSecret = (deps: Deps, r: Row) =>
  r.clientSecret ? openAs(deps.box, 'ssoClientSecret', r.clientSecret) : null;
