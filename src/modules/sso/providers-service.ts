// SSO provider administration (spec 2.8, 4.4; CONTRACT 6): per organisation, or partner-owned.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { assertWithinCeiling, findRole, loadRoleChain } from '../roles/index.js';
import { auditTenant, type TargetScope } from '../tenants/index.js';
import { assertPublicUrl, OutboundRefusedError } from '../../platform/outbound.js';
import { SSO_PRESETS } from './presets.js';
import {
  deleteIdentitiesOf,
  deleteProviderRow,
  findOwnedProvider,
  insertProvider,
  listOwnedProviders,
  type NewProvider,
  otherActiveProvider,
  type ProviderRow,
  updateProviderRow,
} from './repo.js';
import { acsUrl, certificateInfo, fetchMetadata, parseIdpMetadata, SamlXmlError, spMetadataUrl } from './saml.js';

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

export async function findProvider(db: Executor, t: TargetScope, id: string): Promise<Row> {
  const row = await findOwnedProvider(db, t, id);
  if (!row) throw notFound('SSO provider');
  return row;
}

export async function listProviders(deps: Deps, t: TargetScope) {
  const rows = await listOwnedProviders(deps.db, t);
  return { data: rows.map((r) => providerToJson(deps, r)), nextCursor: null };
}

const fieldError = (field: string, msg: string) =>
  new AppError('validation_failed', msg, { details: { fieldErrors: { [field]: [msg] }, formErrors: [] } });

async function checkPublic(deps: Deps, url: string, field: 'issuer' | 'metadataUrl') {
  if (deps.config.ssoAllowInsecureIssuers) return;
  try {
    await assertPublicUrl(new URL(url), field === 'issuer' ? 'The issuer' : 'The metadata URL');
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw fieldError(field, err.message);
    throw fieldError(field, `The ${field === 'issuer' ? 'issuer' : 'metadata URL'} host could not be resolved.`);
  }
}
const checkIssuer = (deps: Deps, issuer: string) => checkPublic(deps, issuer, 'issuer');

/** A SAML IdP's metadata from the request: inline, or fetched from its URL (through the one outbound check). */
async function loadMetadata(deps: Deps, input: { metadataXml?: string; metadataUrl?: string }) {
  const field = input.metadataUrl !== undefined ? 'metadataUrl' : 'metadataXml';
  let xml = input.metadataXml ?? '';
  if (input.metadataUrl !== undefined) {
    await checkPublic(deps, input.metadataUrl, 'metadataUrl');
    try {
      xml = await fetchMetadata(deps, input.metadataUrl);
    } catch (err) {
      throw fieldError(
        'metadataUrl',
        err instanceof SamlXmlError || err instanceof OutboundRefusedError
          ? err.message
          : 'The metadata could not be fetched.',
      );
    }
  }
  try {
    return { xml, ...parseIdpMetadata(xml, deps.config.ssoAllowInsecureIssuers) };
  } catch (err) {
    if (err instanceof SamlXmlError) throw fieldError(field, err.message);
    throw err;
  }
}

/**
 * An auto-provisioning provider hands its default role to whoever the IdP vouches for: like an invitation, it is
 * refused (permission_ceiling) to a caller who does not hold that role's permissions (`ceilingOf` null = not widened).
 */
async function checkDefaultRole(
  tx: Executor,
  t: TargetScope,
  autoProvision: boolean,
  defaultRoleId: string | null,
  ceilingOf: Principal | null,
) {
  if (autoProvision && !defaultRoleId) throw new AppError('default_role_required');
  if (defaultRoleId) {
    await findRole(tx, t, defaultRoleId).catch(() => {
      throw new AppError('validation_failed', 'The default role is not a role of this scope.', {
        details: { fieldErrors: { defaultRoleId: ['Not a role of this scope'] }, formErrors: [] },
      });
    });
    if (autoProvision && ceilingOf)
      assertWithinCeiling(ceilingOf.permissions, (await loadRoleChain(tx, defaultRoleId))?.permissions ?? []);
  }
}

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

/** Enforcing SSO through a provider whose /test never succeeded is allowed, with a warning (issue 13). */
const warningsFor = (row: Row, input: ProviderInput) =>
  input.enforceSSO === true && !row.lastTestedOkAt ? { warnings: ['provider_untested' as const] } : {};

export async function createProvider(
  deps: Deps,
  caller: Principal,
  t: TargetScope,
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
      clientSecret: input.clientSecret ? deps.box.seal(input.clientSecret, 'sso-client-secret') : null,
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
    return { ...providerToJson(deps, row), ...warningsFor(row, input) };
  });
}

export async function updateProvider(
  deps: Deps,
  caller: Principal,
  t: TargetScope,
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
        ? { clientSecret: input.clientSecret ? deps.box.seal(input.clientSecret, 'sso-client-secret') : null }
        : {}),
      ...(input.scopes !== undefined ? { scopes: input.scopes } : {}),
      ...(input.allowedDomains !== undefined ? { allowedDomains: input.allowedDomains } : {}),
      ...(input.enforceSSO !== undefined ? { enforceSso: input.enforceSSO } : {}),
      ...(input.trustIdpMfa !== undefined ? { trustIdpMfa: input.trustIdpMfa } : {}),
      ...(input.status !== undefined ? { status: input.status } : {}),
      autoProvision,
      defaultRoleId,
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
    return { ...providerToJson(deps, row), ...warningsFor(row, input) };
  });
}

export async function deleteProvider(
  deps: Deps,
  caller: Principal,
  t: TargetScope,
  id: string,
  meta: AuditRequestMeta,
) {
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

export const openSecret = (deps: Deps, r: Row) =>
  r.clientSecret ? deps.box.open(r.clientSecret, 'sso-client-secret') : null;

export async function testProvider(deps: Deps, t: TargetScope, id: string) {
  const p = await findProvider(deps.db, t, id);
  if (p.type === 'saml') return testSamlProvider(deps, p);
  try {
    const config = await deps.oidc.discover(p.issuer, p.clientId, openSecret(deps, p));
    const m = config.serverMetadata();
    await updateProviderRow(deps.db, p.id, { lastTestedOkAt: deps.clock.now() });
    return {
      ok: true as const,
      issuer: m.issuer,
      authorizationEndpoint: m.authorization_endpoint ?? '',
      tokenEndpoint: m.token_endpoint ?? '',
      jwksUri: m.jwks_uri ?? '',
    };
  } catch (err) {
    return { ok: false as const, error: (err as Error).message.slice(0, 300) };
  }
}

/**
 * SAML: the metadata is fetched again (from metadataUrl) or re-read, and each signing certificate's expiry reported.
 * Fetched metadata that still names the same entity brings its certificates and SSO URL in (an IdP's key rollover).
 */
async function testSamlProvider(deps: Deps, p: Row) {
  try {
    const xml = p.metadataUrl ? await fetchMetadata(deps, p.metadataUrl) : (p.metadataXml ?? '');
    const md = parseIdpMetadata(xml, deps.config.ssoAllowInsecureIssuers);
    if (md.entityId !== p.issuer)
      return {
        ok: false as const,
        error: `The metadata now names the entity ${md.entityId.slice(0, 200)}; save the metadata again to accept it.`,
      };
    const certificates = certificateInfo(md.certs, deps.clock.now());
    if (certificates.every((c) => c.expired))
      return { ok: false as const, error: 'Every signing certificate in the metadata has expired.' };
    await updateProviderRow(deps.db, p.id, {
      lastTestedOkAt: deps.clock.now(),
      ...(p.metadataUrl ? { metadataXml: xml, idpCerts: md.certs, idpSsoUrl: md.ssoUrl } : {}),
    });
    return { ok: true as const, type: 'saml' as const, issuer: md.entityId, ssoUrl: md.ssoUrl, certificates };
  } catch (err) {
    return {
      ok: false as const,
      error:
        err instanceof SamlXmlError || err instanceof OutboundRefusedError
          ? err.message
          : 'The metadata could not be fetched.',
    };
  }
}
