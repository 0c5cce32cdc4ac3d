// SSO provider administration: per organisation, or partner-owned. Create, update and
// delete here; reading in providers-view.ts, input checks in providers-checks.ts, the /test flow in providers-test.ts.
import { sealAs } from '../../db/sealed-catalogue.js';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { speaksForPartner } from '../../access/principal.js';
import { AppError } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { auditTenant } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { SSO_PRESETS } from './presets.js';
import { checkDefaultRole, checkIssuer, fieldError, loadMetadata } from './providers-checks.js';
import { findProvider, providerWithDomains } from './providers-view.js';
import {
  deleteIdentitiesOf,
  deleteProviderRow,
  insertProvider,
  type NewProvider,
  otherActiveProvider,
  type ProviderRow,
  updateProviderRow,
} from './repo.js';

export * from './providers-test.js';
export * from './providers-view.js';

type Row = ProviderRow;

export interface ProviderInput {
  name?: string;
  type?: string;
  preset?: string;
  issuer?: string;
  clientId?: string;
  clientSecret?: string | null;
  scopes?: string;
  autoProvision?: boolean;
  defaultRoleId?: string | null;
  allowedDomains?: string;
  enforceSSO?: boolean;
  trustIdpMfa?: boolean;
  metadataXml?: string;
  metadataUrl?: string;
  emailAttribute?: string | null;
  nameAttribute?: string | null;
}

const OIDC_FIELDS = ['issuer', 'clientId', 'clientSecret', 'scopes'] as const;
const SAML_FIELDS = ['metadataXml', 'metadataUrl', 'emailAttribute', 'nameAttribute'] as const;

/** Enforcing SSO through a provider whose /test never succeeded is allowed, with a warning. */
const warningsFor = (row: Row, input: ProviderInput) =>
  input.enforceSSO === true && !row.lastTestedOkAt ? { warnings: ['provider_untested' as const] } : {};

export async function createProvider(
  deps: Deps,
  caller: Principal,
  t: Target,
  input: ProviderInput & { name: string },
  meta: AuditRequestMeta,
) {
  if (input.type !== undefined && input.type !== 'oidc' && input.type !== 'saml')
    throw new AppError('unsupported_provider_type');
  const preset = SSO_PRESETS.find((p) => p.id === input.preset);
  let protocol: Pick<
    NewProvider,
    | 'type'
    | 'issuer'
    | 'clientId'
    | 'clientSecret'
    | 'scopes'
    | 'metadataXml'
    | 'metadataUrl'
    | 'idpCerts'
    | 'idpSsoUrl'
    | 'emailAttribute'
    | 'nameAttribute'
  >;
  if (input.type === 'saml') {
    // A body with type saml and OIDC settings matched the OIDC shape: name what is missing.
    if (input.metadataXml === undefined && input.metadataUrl === undefined)
      throw fieldError('metadataXml', 'A SAML provider needs metadataXml or metadataUrl (and no OIDC settings).');
    const md = await loadMetadata(deps, input);
    protocol = {
      type: 'saml',
      issuer: md.entityId,
      clientId: '',
      clientSecret: null,
      metadataXml: md.xml,
      metadataUrl: input.metadataUrl ?? null,
      idpCerts: md.certs,
      idpSsoUrl: md.ssoUrl,
      emailAttribute: input.emailAttribute ?? preset?.saml?.emailAttribute ?? null,
      nameAttribute: input.nameAttribute ?? preset?.saml?.nameAttribute ?? null,
    };
  } else {
    if (!input.issuer || !input.clientId)
      throw fieldError('issuer', 'An OpenID Connect provider needs issuer and clientId.');
    await checkIssuer(deps, input.issuer);
    protocol = {
      type: 'oidc',
      issuer: input.issuer,
      clientId: input.clientId,
      clientSecret: input.clientSecret ? sealAs(deps.box, 'ssoClientSecret', input.clientSecret) : null,
      scopes: input.scopes ?? preset?.scopes ?? 'openid email profile',
    };
  }
  return deps.db.transaction(async (tx) => {
    await checkDefaultRole(tx, t, input.autoProvision ?? false, input.defaultRoleId ?? null, caller);
    const row = await insertProvider(tx, {
      partnerId: t.partnerId,
      orgId: t.orgId,
      name: input.name,
      status: 'inactive',
      ...protocol,
      autoProvision: input.autoProvision ?? false,
      defaultRoleId: input.defaultRoleId ?? null,
      allowedDomains: input.allowedDomains ?? '',
      enforceSso: input.enforceSSO ?? false,
      trustIdpMfa: input.trustIdpMfa ?? false,
      madeByPartner: t.orgId === null || speaksForPartner(caller),
    });
    await deps.audit.record(
      tx,
      {
        action: 'sso.provider.create',
        actor: actorOf(caller),
        ...auditTenant(t),
        resourceType: 'sso_provider',
        resourceId: row.id,
        details: { name: input.name, type: protocol.type, issuer: protocol.issuer, preset: input.preset ?? null },
      },
      meta,
    );
    return { ...(await providerWithDomains(deps, row, tx)), ...warningsFor(row, input) };
  });
}

export async function updateProvider(
  deps: Deps,
  caller: Principal,
  t: Target,
  id: string,
  input: ProviderInput & { status?: Row['status'] },
  meta: AuditRequestMeta,
  action = 'sso.provider.update',
) {
  if (input.issuer) await checkIssuer(deps, input.issuer);
  const md =
    input.metadataXml !== undefined || input.metadataUrl !== undefined ? await loadMetadata(deps, input) : null;
  return deps.db.transaction(async (tx) => {
    const current = await findProvider(tx, t, id);
    const foreign = (current.type === 'saml' ? OIDC_FIELDS : SAML_FIELDS).find((k) => input[k] !== undefined);
    if (foreign)
      throw fieldError(
        foreign,
        `${foreign} is not a setting of ${current.type === 'saml' ? 'a SAML' : 'an OpenID Connect'} provider.`,
      );
    const issuer = md ? md.entityId : input.issuer;
    const autoProvision = input.autoProvision ?? current.autoProvision;
    const defaultRoleId = input.defaultRoleId === undefined ? current.defaultRoleId : input.defaultRoleId;
    // Changes that widen who is provisioned with the role (or which IdP vouches) are held to the ceiling.
    const widens =
      input.autoProvision !== undefined ||
      input.defaultRoleId !== undefined ||
      issuer !== undefined ||
      input.allowedDomains !== undefined ||
      input.status === 'active';
    await checkDefaultRole(tx, t, autoProvision, defaultRoleId, widens ? caller : null);
    if (input.status === 'active') {
      if (await otherActiveProvider(tx, t, id))
        throw new AppError('conflict', 'Another provider is already active here; deactivate it first.');
    }
    const row = await updateProviderRow(tx, id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(issuer !== undefined ? { issuer } : {}),
      ...(md
        ? { metadataXml: md.xml, metadataUrl: input.metadataUrl ?? null, idpCerts: md.certs, idpSsoUrl: md.ssoUrl }
        : {}),
      ...(input.emailAttribute !== undefined ? { emailAttribute: input.emailAttribute } : {}),
      ...(input.nameAttribute !== undefined ? { nameAttribute: input.nameAttribute } : {}),
      ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
      ...(input.clientSecret !== undefined
        ? { clientSecret: input.clientSecret ? sealAs(deps.box, 'ssoClientSecret', input.clientSecret) : null }
        : {}),
      ...(input.scopes !== undefined ? { scopes: input.scopes } : {}),
      ...(input.allowedDomains !== undefined ? { allowedDomains: input.allowedDomains } : {}),
      ...(input.enforceSSO !== undefined ? { enforceSso: input.enforceSSO } : {}),
      ...(input.trustIdpMfa !== undefined ? { trustIdpMfa: input.trustIdpMfa } : {}),
      ...(input.status !== undefined ? { status: input.status } : {}),
      autoProvision,
      defaultRoleId,
      // Configured by the partner's staff: from now on held by the customer's controls like one they made.
      ...(speaksForPartner(caller) ? { madeByPartner: true } : {}),
      updatedAt: deps.clock.now(),
    });
    // A subject means something only at its issuer: links made at the old one must not sign anyone in at the new one.
    const issuerChanged = issuer !== undefined && issuer !== current.issuer;
    const unlinked = issuerChanged ? await deleteIdentitiesOf(tx, id) : 0;
    const changed = Object.keys(input)
      .filter((k) => k !== 'clientSecret' && k !== 'metadataXml')
      .concat(md ? ['metadata'] : [])
      .sort();
    await deps.audit.record(
      tx,
      {
        action,
        actor: actorOf(caller),
        ...auditTenant(t),
        resourceType: 'sso_provider',
        resourceId: id,
        details: {
          changed,
          clientAuthChanged: input.clientSecret !== undefined,
          ...(input.status ? { status: input.status } : {}),
          ...(issuerChanged ? { identitiesUnlinked: unlinked } : {}),
        },
      },
      meta,
    );
    return { ...(await providerWithDomains(deps, row, tx)), ...warningsFor(row, input) };
  });
}

export async function deleteProvider(deps: Deps, caller: Principal, t: Target, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const current = await findProvider(tx, t, id);
    await deleteProviderRow(tx, id); // identities cascade
    await deps.audit.record(
      tx,
      {
        action: 'sso.provider.delete',
        actor: actorOf(caller),
        ...auditTenant(t),
        resourceType: 'sso_provider',
        resourceId: id,
        details: { name: current.name },
      },
      meta,
    );
  });
}
