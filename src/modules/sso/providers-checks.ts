// SSO provider input checks: public issuer and metadata URLs, a SAML IdP's metadata, the default role's ceiling.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { ORGANIZATION_WIDE } from '../../access/ceiling.js';
import { assertWithinReach } from '../../http/refusal.js';
import { findRole, loadRoleChain } from '../roles/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { assertPublicUrl, OutboundRefusedError } from '../../platform/outbound.js';
import { fetchMetadata, parseIdpMetadata, SamlXmlError } from './saml.js';

export const fieldError = (field: string, msg: string) =>
  new AppError('validation_failed', msg, { details: { fieldErrors: { [field]: [msg] }, formErrors: [] } });

async function checkPublic(deps: Deps, url: string, field: 'issuer' | 'metadataUrl') {
  try {
    await assertPublicUrl(
      new URL(url),
      field === 'issuer' ? 'The issuer' : 'The metadata URL',
      deps.config.ssoOutbound,
    );
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw fieldError(field, err.message);
    throw fieldError(field, `The ${field === 'issuer' ? 'issuer' : 'metadata URL'} host could not be resolved.`);
  }
}
export const checkIssuer = (deps: Deps, issuer: string) => checkPublic(deps, issuer, 'issuer');

/** A SAML IdP's metadata from the request: inline, or fetched from its URL (through the one outbound check). */
export async function loadMetadata(deps: Deps, input: { metadataXml?: string; metadataUrl?: string }) {
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
 * refused (permission_ceiling) to a caller who does not hold that role's permissions, and any provider to a caller
 * restricted to sites or device groups (`ceilingOf` null = not widened).
 */
export async function checkDefaultRole(
  tx: Executor,
  t: Target,
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
  }
  // A provider is the organisation's (or the partner's) sign-in and provisions organisation-wide members.
  if (ceilingOf)
    assertWithinReach(ceilingOf, {
      permissions: autoProvision && defaultRoleId ? ((await loadRoleChain(tx, defaultRoleId))?.permissions ?? []) : [],
      ...ORGANIZATION_WIDE,
    });
}
