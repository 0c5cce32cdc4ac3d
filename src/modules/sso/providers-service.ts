// SSO provider administration (spec 2.8, 4.4; CONTRACT 6): per organisation, or partner-owned.
import { and, asc, eq, isNull, ne } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { ssoIdentities, ssoProviders } from '../../db/schema/index.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/writer.js';
import { loadRoleChain } from '../roles/resolver.js';
import { assertWithinCeiling, findRole } from '../roles/service.js';
import { auditTenant, type TargetScope } from '../tenants/scope.js';
import { InsecureIssuerError, assertPublicUrl } from './oidc.js';
import { SSO_PRESETS } from './presets.js';

type Row = typeof ssoProviders.$inferSelect;

export const providerToJson = (r: Row) => ({
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
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

const ownedBy = (t: TargetScope) => (t.orgId ? eq(ssoProviders.orgId, t.orgId) : and(eq(ssoProviders.partnerId, t.partnerId), isNull(ssoProviders.orgId)));

export async function findProvider(db: Executor, t: TargetScope, id: string): Promise<Row> {
  const [row] = await db.select().from(ssoProviders).where(and(eq(ssoProviders.id, id), ownedBy(t))).limit(1);
  if (!row) throw notFound('SSO provider');
  return row;
}

export async function listProviders(db: Executor, t: TargetScope) {
  const rows = await db.select().from(ssoProviders).where(ownedBy(t)).orderBy(asc(ssoProviders.name), asc(ssoProviders.id));
  return { data: rows.map(providerToJson), nextCursor: null };
}

const issuerError = (msg: string) => new AppError('validation_failed', msg, { details: { fieldErrors: { issuer: [msg] }, formErrors: [] } });

async function checkIssuer(deps: Deps, issuer: string) {
  if (deps.config.ssoAllowInsecureIssuers) return;
  try {
    await assertPublicUrl(new URL(issuer));
  } catch (err) {
    if (err instanceof InsecureIssuerError) throw issuerError(err.message);
    throw issuerError('The issuer host could not be resolved.');
  }
}

/**
 * An auto-provisioning provider hands its default role to whoever the IdP vouches for: like an invitation, it is
 * refused (permission_ceiling) to a caller who does not hold that role's permissions (`ceilingOf` null = not widened).
 */
async function checkDefaultRole(tx: Executor, t: TargetScope, autoProvision: boolean, defaultRoleId: string | null, ceilingOf: Principal | null) {
  if (autoProvision && !defaultRoleId) throw new AppError('default_role_required');
  if (defaultRoleId) {
    await findRole(tx, t, defaultRoleId).catch(() => {
      throw new AppError('validation_failed', 'The default role is not a role of this scope.', { details: { fieldErrors: { defaultRoleId: ['Not a role of this scope'] }, formErrors: [] } });
    });
    if (autoProvision && ceilingOf) assertWithinCeiling(ceilingOf.permissions, (await loadRoleChain(tx, defaultRoleId))?.permissions ?? []);
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
}

/** Enforcing SSO through a provider whose /test never succeeded is allowed, with a warning (issue 13). */
const warningsFor = (row: Row, input: ProviderInput) => (input.enforceSSO === true && !row.lastTestedOkAt ? { warnings: ['provider_untested' as const] } : {});

export async function createProvider(deps: Deps, caller: Principal, t: TargetScope, input: ProviderInput & { name: string; issuer: string; clientId: string }, meta: AuditRequestMeta) {
  if (input.type !== undefined && input.type !== 'oidc') throw new AppError('unsupported_provider_type');
  await checkIssuer(deps, input.issuer);
  const preset = SSO_PRESETS.find((p) => p.id === input.preset);
  return deps.db.transaction(async (tx) => {
    await checkDefaultRole(tx, t, input.autoProvision ?? false, input.defaultRoleId ?? null, caller);
    const [row] = await tx
      .insert(ssoProviders)
      .values({
        partnerId: t.partnerId,
        orgId: t.orgId,
        name: input.name,
        type: 'oidc',
        status: 'inactive',
        issuer: input.issuer,
        clientId: input.clientId,
        clientSecret: input.clientSecret ? deps.box.seal(input.clientSecret, 'sso-client-secret') : null,
        scopes: input.scopes ?? preset?.scopes ?? 'openid email profile',
        autoProvision: input.autoProvision ?? false,
        defaultRoleId: input.defaultRoleId ?? null,
        allowedDomains: input.allowedDomains ?? '',
        enforceSso: input.enforceSSO ?? false,
        trustIdpMfa: input.trustIdpMfa ?? false,
      })
      .returning();
    await deps.audit.record(tx, { action: 'sso.provider.create', actor: { userId: caller.userId, email: caller.email }, ...auditTenant(t), resourceType: 'sso_provider', resourceId: row!.id, details: { name: input.name, issuer: input.issuer, preset: input.preset ?? null } }, meta);
    return { ...providerToJson(row!), ...warningsFor(row!, input) };
  });
}

export async function updateProvider(deps: Deps, caller: Principal, t: TargetScope, id: string, input: ProviderInput & { status?: Row['status'] }, meta: AuditRequestMeta, action = 'sso.provider.update') {
  if (input.issuer) await checkIssuer(deps, input.issuer);
  return deps.db.transaction(async (tx) => {
    const current = await findProvider(tx, t, id);
    const autoProvision = input.autoProvision ?? current.autoProvision;
    const defaultRoleId = input.defaultRoleId === undefined ? current.defaultRoleId : input.defaultRoleId;
    // Changes that widen who is provisioned with the role (or which IdP vouches) are held to the ceiling.
    const widens = input.autoProvision !== undefined || input.defaultRoleId !== undefined || input.issuer !== undefined || input.allowedDomains !== undefined || input.status === 'active';
    await checkDefaultRole(tx, t, autoProvision, defaultRoleId, widens ? caller : null);
    if (input.status === 'active') {
      const [other] = await tx.select({ id: ssoProviders.id }).from(ssoProviders).where(and(ownedBy(t), eq(ssoProviders.status, 'active'), ne(ssoProviders.id, id))).limit(1);
      if (other) throw new AppError('conflict', 'Another provider is already active here; deactivate it first.');
    }
    const [row] = await tx
      .update(ssoProviders)
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.issuer !== undefined ? { issuer: input.issuer } : {}),
        ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
        ...(input.clientSecret !== undefined ? { clientSecret: input.clientSecret ? deps.box.seal(input.clientSecret, 'sso-client-secret') : null } : {}),
        ...(input.scopes !== undefined ? { scopes: input.scopes } : {}),
        ...(input.allowedDomains !== undefined ? { allowedDomains: input.allowedDomains } : {}),
        ...(input.enforceSSO !== undefined ? { enforceSso: input.enforceSSO } : {}),
        ...(input.trustIdpMfa !== undefined ? { trustIdpMfa: input.trustIdpMfa } : {}),
        ...(input.status !== undefined ? { status: input.status } : {}),
        autoProvision,
        defaultRoleId,
        updatedAt: deps.clock.now(),
      })
      .where(eq(ssoProviders.id, id))
      .returning();
    // A subject means something only at its issuer: links made at the old one must not sign anyone in at the new one.
    const issuerChanged = input.issuer !== undefined && input.issuer !== current.issuer;
    const unlinked = issuerChanged ? (await tx.delete(ssoIdentities).where(eq(ssoIdentities.providerId, id)).returning({ id: ssoIdentities.id })).length : 0;
    const changed = Object.keys(input).filter((k) => k !== 'clientSecret').sort();
    await deps.audit.record(
      tx,
      { action, actor: { userId: caller.userId, email: caller.email }, ...auditTenant(t), resourceType: 'sso_provider', resourceId: id, details: { changed, clientAuthChanged: input.clientSecret !== undefined, ...(input.status ? { status: input.status } : {}), ...(issuerChanged ? { identitiesUnlinked: unlinked } : {}) } },
      meta,
    );
    return { ...providerToJson(row!), ...warningsFor(row!, input) };
  });
}

export async function deleteProvider(deps: Deps, caller: Principal, t: TargetScope, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const current = await findProvider(tx, t, id);
    await tx.delete(ssoProviders).where(eq(ssoProviders.id, id)); // identities cascade
    await deps.audit.record(tx, { action: 'sso.provider.delete', actor: { userId: caller.userId, email: caller.email }, ...auditTenant(t), resourceType: 'sso_provider', resourceId: id, details: { name: current.name } }, meta);
  });
}

export const openSecret = (deps: Deps, r: Row) => (r.clientSecret ? deps.box.open(r.clientSecret, 'sso-client-secret') : null);

export async function testProvider(deps: Deps, t: TargetScope, id: string) {
  const p = await findProvider(deps.db, t, id);
  try {
    const config = await deps.oidc.discover(p.issuer, p.clientId, openSecret(deps, p));
    const m = config.serverMetadata();
    await deps.db.update(ssoProviders).set({ lastTestedOkAt: deps.clock.now() }).where(eq(ssoProviders.id, p.id));
    return { ok: true as const, issuer: m.issuer, authorizationEndpoint: m.authorization_endpoint ?? '', tokenEndpoint: m.token_endpoint ?? '', jwksUri: m.jwks_uri ?? '' };
  } catch (err) {
    return { ok: false as const, error: (err as Error).message.slice(0, 300) };
  }
}
