// Shared set-up for the SSO tests: tenants and admins created directly, providers created through the API.
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { PeerApp, TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import { proveDomain } from '../support/dns.js';
import { createOrg, partnerAdmin } from '../support/fixtures.js';
import type { IdpUser } from '../support/oidc.js';

export const ORG_TECHNICIAN_ROLE_ID = '00000000-0000-4000-8000-000000000005';
export const PARTNER_TECHNICIAN_ROLE_ID = '00000000-0000-4000-8000-000000000002';

export const uniq = () => randomBytes(4).toString('hex');

/** A fresh email domain per test, so discovery and allowedDomains never see another test's providers. */
export const freshDomain = () => `corp-${uniq()}.example.com`;

export const idpUser = (email: string, extra: Partial<IdpUser> = {}): IdpUser => ({
  sub: `sub-${randomUUID()}`,
  email,
  email_verified: true,
  name: 'Federated User',
  ...extra,
});

export interface IdpClient {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export interface ProviderSettings {
  name?: string;
  autoProvision?: boolean;
  defaultRoleId?: string | null;
  allowedDomains?: string;
  enforceSSO?: boolean;
  scopes?: string;
}

/** A partner (admin signed in, MFA satisfied) and one organisation. */
export async function tenant(t: TestApp) {
  const admin = await partnerAdmin(t);
  const org = await createOrg(t, admin.partner.id);
  return { ...admin, org };
}

/** POST /sso/providers then /status active, both through the API; orgId null = partner-owned. */
export async function createActiveProvider(
  api: ApiClient,
  idp: IdpClient,
  orgId: string | null,
  settings: ProviderSettings = {},
) {
  const created = await api.post('/sso/providers', {
    name: settings.name ?? `IdP ${uniq()}`,
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    ...(orgId ? { orgId } : {}),
    ...(settings.scopes ? { scopes: settings.scopes } : {}),
    autoProvision: settings.autoProvision ?? false,
    ...(settings.defaultRoleId !== undefined ? { defaultRoleId: settings.defaultRoleId } : {}),
    ...(settings.allowedDomains !== undefined ? { allowedDomains: settings.allowedDomains } : {}),
    ...(settings.enforceSSO !== undefined ? { enforceSSO: settings.enforceSSO } : {}),
  });
  expect(created.status, created.text).toBe(201);
  const activated = await setStatus(api, created.body.id, 'active', orgId);
  expect(activated.status, activated.text).toBe(200);
  return activated.body as { id: string; orgId: string | null; partnerId: string; name: string; status: string };
}

export const setStatus = (
  api: ApiClient,
  id: string,
  status: 'active' | 'inactive' | 'testing',
  orgId: string | null,
) => api.post(`/sso/providers/${id}/status`, { status }, { query: { orgId: orgId ?? undefined } });

/** An organisation that has proven a fresh domain, with an active provider at the given IdP that lists it. */
export async function orgWithProvider(t: TestApp, idp: IdpClient, settings: ProviderSettings = {}) {
  const tn = await tenant(t);
  const domain = freshDomain();
  await proveDomain(tn.api, domain, tn.org.id);
  const provider = await createActiveProvider(tn.api, idp, tn.org.id, { allowedDomains: domain, ...settings });
  return { ...tn, domain, provider };
}

/** POST /sso/exchange from a fresh browser of the given instance. */
export async function exchange(app: TestApp | PeerApp, code: string): Promise<ApiResponse> {
  return app.client().post('/sso/exchange', { code });
}

/** The flow of a callback that led to the console's link page (`${APP_URL}/sso/link?flow=`), else null. */
export function linkFlowOf(location: string | null): string | null {
  if (!location) return null;
  const u = new URL(location);
  return u.pathname === '/sso/link' ? u.searchParams.get('flow') : null;
}

/** A SAML provider created from the IdP's metadata (inline, or by URL), then activated, both through the API. */
export async function createActiveSamlProvider(
  api: ApiClient,
  idp: { metadataXml: string; metadataUrl: string },
  orgId: string | null,
  settings: ProviderSettings & { byUrl?: boolean; trustIdpMfa?: boolean } = {},
) {
  const created = await api.post('/sso/providers', {
    type: 'saml',
    name: settings.name ?? `SAML IdP ${uniq()}`,
    ...(settings.byUrl ? { metadataUrl: idp.metadataUrl } : { metadataXml: idp.metadataXml }),
    ...(orgId ? { orgId } : {}),
    autoProvision: settings.autoProvision ?? false,
    ...(settings.defaultRoleId !== undefined ? { defaultRoleId: settings.defaultRoleId } : {}),
    ...(settings.allowedDomains !== undefined ? { allowedDomains: settings.allowedDomains } : {}),
    ...(settings.enforceSSO !== undefined ? { enforceSSO: settings.enforceSSO } : {}),
    ...(settings.trustIdpMfa !== undefined ? { trustIdpMfa: settings.trustIdpMfa } : {}),
  });
  expect(created.status, created.text).toBe(201);
  const activated = await setStatus(api, created.body.id, 'active', orgId);
  expect(activated.status, activated.text).toBe(200);
  return activated.body as {
    id: string;
    orgId: string | null;
    partnerId: string;
    name: string;
    status: string;
    entityId: string;
    acsUrl: string;
    spMetadataUrl: string;
  };
}

/** An organisation that has proven a fresh domain, with an active SAML provider at the given IdP that lists it. */
export async function orgWithSamlProvider(
  t: TestApp,
  idp: { metadataXml: string; metadataUrl: string },
  settings: ProviderSettings & { byUrl?: boolean; trustIdpMfa?: boolean } = {},
) {
  const tn = await tenant(t);
  const domain = freshDomain();
  await proveDomain(tn.api, domain, tn.org.id);
  const provider = await createActiveSamlProvider(tn.api, idp, tn.org.id, { allowedDomains: domain, ...settings });
  return { ...tn, domain, provider };
}
