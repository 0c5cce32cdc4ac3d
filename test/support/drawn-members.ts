// Members drawn by fast-check for the "the answer agrees with enforcement" property tests (explain, the authorization
// API): role chains (custom roles under custom or system parents, Force MFA anywhere), memberships (partner: orgAccess
// all / selected / none; organisation: site and device-group restrictions), accounts with and without a factor,
// disabled accounts. `materialise` makes one, signed in to that membership.
import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import type { TestApp } from './app.js';
import { createRoleChain } from './access.js';
import { addOrgMember, addPartnerMember, createUser, sessionFor, type OnboardingTenant } from './fixtures.js';
import { SYSTEM_ROLES } from '../../src/access/catalog.js';

const PARTNER_VIEWER = SYSTEM_ROLES[2].id;
const ORG_VIEWER = SYSTEM_ROLES[5].id;

/** The member arbitrary over `permissions` (each chain link holds a subset of them). */
export function memberArbitrary(permissions: string[]) {
  const link = fc.record({
    permissions: fc.subarray(permissions),
    forceMfa: fc.constantFrom(false, false, false, true),
  });
  return fc.record({
    kind: fc.constantFrom('partner' as const, 'organization' as const),
    chain: fc.array(link, { minLength: 1, maxLength: 4 }),
    /** The chain's root inherits from a system role (Partner Viewer / Organization Viewer). */
    underSystemRole: fc.boolean(),
    /** A partner chain whose root holds *:* (Partner Admin-like). */
    star: fc.constantFrom(false, false, false, false, true),
    orgAccess: fc.constantFrom('all' as const, 'selected' as const, 'none' as const),
    selectedOrgs: fc.subarray([0, 1]),
    org: fc.constantFrom(0, 1),
    sites: fc.option(fc.subarray([0, 1, 2]), { nil: null }),
    groups: fc.option(fc.subarray([0, 1, 2]), { nil: null }),
    mfaEnabled: fc.boolean(),
    disabled: fc.constantFrom(false, false, false, false, false, true),
  });
}
export type DrawnMember = ReturnType<typeof memberArbitrary> extends fc.Arbitrary<infer M> ? M : never;

/** The drawn member in tenant `w` (sites and groups by index), signed in to its membership. */
export async function materialise(
  t: TestApp,
  w: Pick<OnboardingTenant, 'partner' | 'orgs'>,
  siteIds: string[],
  groupIds: string[],
  m: DrawnMember,
) {
  const org = w.orgs[m.org]!;
  const owner =
    m.kind === 'partner'
      ? { kind: 'partner' as const, partnerId: w.partner.id }
      : { kind: 'organization' as const, orgId: org.id };
  const links = m.chain.map((l, i) => (i === 0 && m.star && m.kind === 'partner' ? { ...l, permissions: ['*:*'] } : l));
  const { leaf } = await createRoleChain(
    t,
    owner,
    links,
    m.underSystemRole ? (m.kind === 'partner' ? PARTNER_VIEWER : ORG_VIEWER) : null,
  );
  const user = await createUser(t, { mfaEnabled: m.mfaEnabled });
  if (m.kind === 'partner') {
    await addPartnerMember(t, {
      partnerId: w.partner.id,
      userId: user.id,
      roleId: leaf.id,
      orgAccess: m.orgAccess,
      orgIds: m.selectedOrgs.map((i) => w.orgs[i]!.id),
    });
  } else {
    await addOrgMember(t, {
      orgId: org.id,
      userId: user.id,
      roleId: leaf.id,
      siteIds: m.sites?.map((i) => siteIds[i]!) ?? null,
      deviceGroupIds: m.groups?.map((i) => groupIds[i]!) ?? null,
    });
  }
  const session = await sessionFor(
    t,
    user.id,
    m.kind === 'partner'
      ? { scope: 'partner', partnerId: w.partner.id, roleId: leaf.id }
      : { scope: 'organization', partnerId: w.partner.id, orgId: org.id, roleId: leaf.id },
    true,
  );
  if (m.disabled) await t.deps.db.execute(sql`update users set status = 'disabled' where id = ${user.id}`);
  return { user, roleId: leaf.id, api: t.client().withToken(session.accessToken) };
}
