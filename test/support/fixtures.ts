// Direct data setup for tests of routes that do not create that data themselves (the route under test
// always runs through HTTP). Uses the same session service as sign-in.
import { randomBytes } from 'node:crypto';
import { hash } from '@node-rs/argon2';
import { and, asc, eq } from 'drizzle-orm';
import {
  auditLogs,
  deviceGroups,
  organizationUsers,
  organizations,
  partnerUsers,
  partners,
  sites,
  users,
} from '../../src/db/schema/index.js';
import { createSession } from '../../src/modules/identity/index.js';
import { ORG_ADMIN_ROLE_ID, PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import type { TestApp } from './app.js';
import type { ApiClient } from './client.js';

const suffix = () => randomBytes(4).toString('hex');

export async function createPartner(t: TestApp, name = `Partner ${suffix()}`) {
  const [row] = await t.deps.db
    .insert(partners)
    .values({
      name,
      slug: name
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, ''),
    })
    .returning();
  return row!;
}

export async function createOrg(t: TestApp, partnerId: string, name = `Org ${suffix()}`, settings: object = {}) {
  const [row] = await t.deps.db
    .insert(organizations)
    .values({
      partnerId,
      name,
      slug: name
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, ''),
      settings,
    })
    .returning();
  return row!;
}

export async function createUser(
  t: TestApp,
  opts: {
    email?: string;
    name?: string;
    password?: string;
    status?: 'active' | 'invited' | 'disabled';
    mfaEnabled?: boolean;
    /** Whether the address is proven (default: yes, an established account). */
    emailVerified?: boolean;
  } = {},
) {
  const [row] = await t.deps.db
    .insert(users)
    .values({
      email: opts.email ?? `user-${suffix()}@example.test`,
      name: opts.name ?? 'Test User',
      passwordHash: opts.password ? await hash(opts.password) : null,
      status: opts.status ?? 'active',
      mfaEnabled: opts.mfaEnabled ?? false,
      mfaMethod: opts.mfaEnabled ? 'totp' : null,
      emailVerified: opts.emailVerified ?? true,
    })
    .returning();
  return row!;
}

export async function addPartnerMember(
  t: TestApp,
  m: {
    partnerId: string;
    userId: string;
    roleId?: string;
    orgAccess?: 'all' | 'selected' | 'none' | 'eligible' | 'all_except';
    orgIds?: string[];
  },
) {
  const [row] = await t.deps.db
    .insert(partnerUsers)
    .values({
      partnerId: m.partnerId,
      userId: m.userId,
      roleId: m.roleId ?? PARTNER_ADMIN_ROLE_ID,
      orgAccess: m.orgAccess ?? 'all',
      orgIds: m.orgIds ?? [],
    })
    .returning();
  return row!;
}

export async function addOrgMember(
  t: TestApp,
  m: { orgId: string; userId: string; roleId?: string; siteIds?: string[] | null; deviceGroupIds?: string[] | null },
) {
  const [row] = await t.deps.db
    .insert(organizationUsers)
    .values({
      orgId: m.orgId,
      userId: m.userId,
      roleId: m.roleId ?? ORG_ADMIN_ROLE_ID,
      siteIds: m.siteIds ?? null,
      deviceGroupIds: m.deviceGroupIds ?? null,
    })
    .returning();
  return row!;
}

export interface SignedIn {
  accessToken: string;
  refreshToken: string;
  sessionId: string;
}

/** A session in the given membership, minted by the real session service. */
export async function sessionFor(
  t: TestApp,
  userId: string,
  context: {
    scope: 'partner' | 'organization' | null;
    partnerId?: string | null;
    orgId?: string | null;
    roleId?: string | null;
  },
  mfa = false,
): Promise<SignedIn> {
  return createSession(t.deps, t.deps.db, {
    userId,
    context: {
      scope: context.scope,
      partnerId: context.partnerId ?? null,
      orgId: context.orgId ?? null,
      roleId: context.roleId ?? null,
    },
    mfa,
    ip: '127.0.0.1',
    userAgent: 'vitest',
  });
}

/** A partner with an admin (orgAccess all) signed in, MFA satisfied. */
export async function partnerAdmin(t: TestApp, opts: { mfaEnabled?: boolean } = { mfaEnabled: true }) {
  const partner = await createPartner(t);
  const user = await createUser(t, { mfaEnabled: opts.mfaEnabled });
  await addPartnerMember(t, { partnerId: partner.id, userId: user.id });
  const session = await sessionFor(
    t,
    user.id,
    { scope: 'partner', partnerId: partner.id, roleId: PARTNER_ADMIN_ROLE_ID },
    true,
  );
  return { partner, user, session, api: t.client().withToken(session.accessToken) };
}

// ---------------------------------------------------------------------------------------------
// Helpers for the user, role and tenancy tests. Data setup only: the routes under test run through HTTP.

export async function createSite(t: TestApp, orgId: string, name = `Site ${suffix()}`) {
  const [row] = await t.deps.db.insert(sites).values({ orgId, name }).returning();
  return row!;
}

export async function createDeviceGroup(t: TestApp, orgId: string, opts: { siteId?: string; name?: string } = {}) {
  const [row] = await t.deps.db
    .insert(deviceGroups)
    .values({ orgId, siteId: opts.siteId ?? null, name: opts.name ?? `Group ${suffix()}` })
    .returning();
  return row!;
}

export interface SignedInMember {
  user: typeof users.$inferSelect;
  session: SignedIn;
  api: ApiClient;
}

/**
 * A partner member signed in to that membership (session MFA satisfied; the account has MFA so a Force-MFA
 * role such as Partner Admin does not hold it at 428).
 */
export async function signedInPartnerMember(
  t: TestApp,
  partnerId: string,
  opts: {
    roleId?: string;
    orgAccess?: 'all' | 'selected' | 'none' | 'eligible' | 'all_except';
    orgIds?: string[];
    email?: string;
    name?: string;
    password?: string;
    mfaEnabled?: boolean;
  } = {},
): Promise<SignedInMember> {
  const user = await createUser(t, {
    email: opts.email,
    name: opts.name,
    password: opts.password,
    mfaEnabled: opts.mfaEnabled ?? true,
  });
  const roleId = opts.roleId ?? PARTNER_ADMIN_ROLE_ID;
  await addPartnerMember(t, {
    partnerId,
    userId: user.id,
    roleId,
    orgAccess: opts.orgAccess ?? 'all',
    orgIds: opts.orgIds ?? [],
  });
  const session = await sessionFor(t, user.id, { scope: 'partner', partnerId, roleId }, true);
  return { user, session, api: t.client().withToken(session.accessToken) };
}

/** An organisation member signed in to that membership. */
export async function signedInOrgMember(
  t: TestApp,
  org: { id: string; partnerId: string },
  opts: {
    roleId?: string;
    siteIds?: string[] | null;
    deviceGroupIds?: string[] | null;
    email?: string;
    name?: string;
    password?: string;
    mfaEnabled?: boolean;
  } = {},
): Promise<SignedInMember> {
  const user = await createUser(t, {
    email: opts.email,
    name: opts.name,
    password: opts.password,
    mfaEnabled: opts.mfaEnabled ?? true,
  });
  const roleId = opts.roleId ?? ORG_ADMIN_ROLE_ID;
  await addOrgMember(t, {
    orgId: org.id,
    userId: user.id,
    roleId,
    siteIds: opts.siteIds ?? null,
    deviceGroupIds: opts.deviceGroupIds ?? null,
  });
  const session = await sessionFor(
    t,
    user.id,
    { scope: 'organization', partnerId: org.partnerId, orgId: org.id, roleId },
    true,
  );
  return { user, session, api: t.client().withToken(session.accessToken) };
}

/** Audit records of an action, oldest first, optionally only those about one resource. */
export async function auditRecords(t: TestApp, action: string, resourceId?: string) {
  return t.deps.db
    .select()
    .from(auditLogs)
    .where(
      resourceId
        ? and(eq(auditLogs.action, action), eq(auditLogs.resourceId, resourceId))
        : eq(auditLogs.action, action),
    )
    .orderBy(asc(auditLogs.seq));
}

/** The user account row (to prove an account survives, or to read its status). */
export async function accountOf(t: TestApp, userId: string) {
  const [row] = await t.deps.db.select().from(users).where(eq(users.id, userId));
  return row ?? null;
}

// ---------------------------------------------------------------------------------------------
// Helpers for the custom-field, script and configuration-item tests: devices and contacts as enrolment and the
// contacts import would leave them (the routes under test run through HTTP).
import {
  contacts as contactRows,
  deviceGroupMembers as groupMemberRows,
  devices as deviceRows,
} from '../../src/db/schema/index.js';

export async function createDevice(
  t: TestApp,
  org: { id: string },
  siteId: string,
  opts: { hostname?: string; groupIds?: string[] } = {},
) {
  const [row] = await t.deps.db
    .insert(deviceRows)
    .values({
      orgId: org.id,
      siteId,
      hostname: opts.hostname ?? `pc-${suffix()}`,
      osType: 'windows',
      agentTokenHash: randomBytes(32).toString('hex'),
    })
    .returning();
  if (opts.groupIds?.length)
    await t.deps.db.insert(groupMemberRows).values(opts.groupIds.map((groupId) => ({ deviceId: row!.id, groupId })));
  return row!;
}

export async function createContact(
  t: TestApp,
  orgId: string,
  fields: { externalId?: string | null; email?: string | null; firstName?: string; siteId?: string | null } = {},
) {
  const [row] = await t.deps.db
    .insert(contactRows)
    .values({
      orgId,
      externalId: fields.externalId === undefined ? `ext-${suffix()}` : fields.externalId,
      email: fields.email ?? null,
      firstName: fields.firstName ?? 'Test',
      siteId: fields.siteId ?? null,
    })
    .returning();
  return row!;
}

/** Many devices in one insert (large-import tests). */
export async function createDevices(t: TestApp, org: { id: string }, siteId: string, hostnames: string[]) {
  return t.deps.db
    .insert(deviceRows)
    .values(
      hostnames.map((hostname) => ({
        orgId: org.id,
        siteId,
        hostname,
        osType: 'windows',
        agentTokenHash: randomBytes(32).toString('hex'),
      })),
    )
    .returning();
}

import { SYSTEM_ROLES as ROLES_FOR_WORLD } from '../../src/modules/roles/catalog.js';

export interface OnboardingTenant {
  partner: typeof partners.$inferSelect;
  orgs: [typeof organizations.$inferSelect, typeof organizations.$inferSelect];
  /** Partner Admin, orgAccess all. */
  admin: SignedInMember;
  /** Partner Admin role but orgAccess selected: the first organisation only. */
  selected: SignedInMember;
  /** Partner Technician (orgAccess all) and Partner Viewer. */
  tech: SignedInMember;
  viewer: SignedInMember;
  /** Organization Admin of each organisation. */
  orgAdmins: [SignedInMember, SignedInMember];
  /** Organization Viewer of the first organisation. */
  orgViewer: SignedInMember;
}

/** A partner with two organisations and members of each kind the onboarding tests need. */
export async function onboardingTenant(t: TestApp): Promise<OnboardingTenant> {
  const [partnerAdminRole, partnerTech, partnerViewer, orgAdminRole, , orgViewerRole] = ROLES_FOR_WORLD.map(
    (r) => r.id as string,
  );
  const partner = await createPartner(t);
  const orgs: [typeof organizations.$inferSelect, typeof organizations.$inferSelect] = [
    await createOrg(t, partner.id),
    await createOrg(t, partner.id),
  ];
  return {
    partner,
    orgs,
    admin: await signedInPartnerMember(t, partner.id, { roleId: partnerAdminRole }),
    selected: await signedInPartnerMember(t, partner.id, {
      roleId: partnerAdminRole,
      orgAccess: 'selected',
      orgIds: [orgs[0].id],
    }),
    tech: await signedInPartnerMember(t, partner.id, { roleId: partnerTech }),
    viewer: await signedInPartnerMember(t, partner.id, { roleId: partnerViewer }),
    orgAdmins: [
      await signedInOrgMember(t, orgs[0], { roleId: orgAdminRole }),
      await signedInOrgMember(t, orgs[1], { roleId: orgAdminRole }),
    ],
    orgViewer: await signedInOrgMember(t, orgs[0], { roleId: orgViewerRole }),
  };
}
