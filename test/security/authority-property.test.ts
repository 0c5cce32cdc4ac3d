// Property: no account-wide action (MFA reset, disabling, renaming) by an actor whose authority does not cover every
// active membership of the account changes the account. fast-check draws accounts with memberships in several
// tenants (two partners, their organisations, sites, every system role and a user-manager role) and actors of every
// role and scope; each action runs through HTTP on the real app and database. The coverage oracle below is written
// from the rule's statement, independently of the service's code.
import { eq } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRoleChain } from '../../src/access/resolver.js';
import { sessions, users } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { createRole } from '../support/access.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  addOrgMember,
  addPartnerMember,
  createOrg,
  createPartner,
  createSite,
  createUser,
  sessionFor,
} from '../support/fixtures.js';

const [PA, PT, PV, OA, OT, OV] = SYSTEM_ROLES.map((r) => r.id as string) as [
  string,
  string,
  string,
  string,
  string,
  string,
];

type Tenant = 'A' | 'B';
type OrgKey = 'X' | 'Y' | 'Z'; // X and Y are partner A's, Z is partner B's
type SiteChoice = 'all' | 's1' | 's1s2';
type OrgAccess = 'all' | 'selected' | 'none';

interface PartnerSeat {
  kind: 'partner';
  tenant: Tenant;
  role: 'admin' | 'tech' | 'viewer' | 'manager';
  orgAccess: OrgAccess;
}
interface OrgSeat {
  kind: 'organization';
  org: OrgKey;
  role: 'admin' | 'tech' | 'viewer';
  sites: SiteChoice;
}
type Seat = PartnerSeat | OrgSeat;

const ORG_PARTNER: Record<OrgKey, Tenant> = { X: 'A', Y: 'A', Z: 'B' };

let t: TestApp;
const world = {
  partner: {} as Record<Tenant, string>,
  org: {} as Record<OrgKey, string>,
  sites: {} as Record<'s1' | 's2', string>,
  manager: {} as Record<Tenant, string>,
  perms: new Map<string, ReadonlySet<string>>(),
};

beforeAll(async () => {
  t = await startApp();
  for (const k of ['A', 'B'] as const) world.partner[k] = (await createPartner(t)).id;
  for (const k of ['X', 'Y', 'Z'] as const) world.org[k] = (await createOrg(t, world.partner[ORG_PARTNER[k]])).id;
  world.sites.s1 = (await createSite(t, world.org.X)).id;
  world.sites.s2 = (await createSite(t, world.org.X)).id;
  for (const k of ['A', 'B'] as const) {
    const role = await createRole(t, {
      owner: { kind: 'partner', partnerId: world.partner[k] },
      permissions: ['users:read', 'users:write', 'users:delete', 'users:invite', 'organizations:read'],
    });
    world.manager[k] = role.id;
  }
  for (const id of [PA, PT, PV, OA, OT, OV, world.manager.A, world.manager.B])
    world.perms.set(id, (await loadRoleChain(t.deps.db, id))!.permissions);
}, 120_000);
afterAll(async () => t?.close());

const roleIdOf = (s: Seat): string =>
  s.kind === 'partner'
    ? { admin: PA, tech: PT, viewer: PV, manager: world.manager[s.tenant] }[s.role]
    : { admin: OA, tech: OT, viewer: OV }[s.role];
const sitesOf = (s: OrgSeat): string[] | null =>
  s.org !== 'X' || s.sites === 'all' ? null : s.sites === 's1' ? [world.sites.s1] : [world.sites.s1, world.sites.s2];
const partnerOf = (s: Seat): Tenant => (s.kind === 'partner' ? s.tenant : ORG_PARTNER[s.org]);
const reachOf = (s: PartnerSeat): 'all' | OrgKey[] =>
  s.orgAccess === 'all' ? 'all' : s.orgAccess === 'selected' ? (s.tenant === 'A' ? ['X'] : ['Z']) : [];

/** The rule, from its statement: every membership in the actor's tenant, within its reach and sites, under its ceiling. */
function covers(actor: Seat, m: Seat): boolean {
  const held = world.perms.get(roleIdOf(actor))!;
  const theirs = world.perms.get(roleIdOf(m))!;
  const ceiling = held.has('*:*') || [...theirs].every((k) => held.has(k));
  if (!ceiling || partnerOf(actor) !== partnerOf(m)) return false;
  if (actor.kind === 'partner') {
    const mine = reachOf(actor);
    if (m.kind === 'organization') return mine === 'all' || mine.includes(m.org);
    const other = reachOf(m);
    return mine === 'all' || (other !== 'all' && other.every((o) => mine.includes(o)));
  }
  if (m.kind !== 'organization' || m.org !== actor.org) return false;
  const mine = sitesOf(actor);
  const other = sitesOf(m);
  return mine === null || other?.every((s) => mine.includes(s)) === true;
}

const partnerSeat = (tenant?: Tenant): fc.Arbitrary<PartnerSeat> =>
  fc.record({
    kind: fc.constant('partner' as const),
    tenant: tenant ? fc.constant(tenant) : fc.constantFrom<Tenant>('A', 'B'),
    role: fc.constantFrom('admin', 'tech', 'viewer', 'manager'),
    orgAccess: fc.constantFrom<OrgAccess>('all', 'all', 'selected', 'none'),
  });
const orgSeat = (org?: OrgKey): fc.Arbitrary<OrgSeat> =>
  fc.record({
    kind: fc.constant('organization' as const),
    org: org ? fc.constant(org) : fc.constantFrom<OrgKey>('X', 'Y', 'Z'),
    role: fc.constantFrom('admin', 'tech', 'viewer'),
    sites: fc.constantFrom<SiteChoice>('all', 's1', 's1s2'),
  });
const anySeat: fc.Arbitrary<Seat> = fc.oneof(partnerSeat(), orgSeat());

/** The actor, and the account: one seat where the actor can address it, and up to three more anywhere. */
const scenario = anySeat.chain((actor) =>
  fc.record({
    actor: fc.constant(actor),
    addressed:
      actor.kind === 'partner'
        ? fc.oneof(partnerSeat(actor.tenant), orgSeat(actor.tenant === 'A' ? 'X' : 'Z'))
        : orgSeat(actor.org),
    others: fc.array(anySeat, { maxLength: 3 }),
    action: fc.constantFrom('mfa_reset', 'disable', 'rename'),
  }),
);

const keyOf = (s: Seat) => (s.kind === 'partner' ? `p:${s.tenant}` : `o:${s.org}`);

async function seat(userId: string, s: Seat) {
  if (s.kind === 'partner')
    await addPartnerMember(t, {
      partnerId: world.partner[s.tenant],
      userId,
      roleId: roleIdOf(s),
      orgAccess: s.orgAccess,
      orgIds: reachOf(s) === 'all' ? [] : (reachOf(s) as OrgKey[]).map((o) => world.org[o]),
    });
  else await addOrgMember(t, { orgId: world.org[s.org], userId, roleId: roleIdOf(s), siteIds: sitesOf(s) });
}

async function accountState(userId: string) {
  const [u] = await t.deps.db.select().from(users).where(eq(users.id, userId));
  const own = await t.deps.db.select().from(sessions).where(eq(sessions.userId, userId));
  return {
    status: u!.status,
    name: u!.name,
    mfaEnabled: u!.mfaEnabled,
    mfaMethod: u!.mfaMethod,
    live: own.filter((s) => s.revokedAt === null).length,
  };
}

describe('no account-wide action by an actor without authority over every membership changes the account', () => {
  it('drawn accounts and actors, through HTTP', async () => {
    let changed = 0;
    let refusedOutside = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ actor, addressed, others, action }) => {
        // One seat per tenant: the addressed one first, then the others in tenants not yet held.
        const memberships = [addressed];
        for (const o of others) if (!memberships.some((m) => keyOf(m) === keyOf(o))) memberships.push(o);
        const target = await createUser(t, { mfaEnabled: true, name: 'Target' });
        for (const m of memberships) await seat(target.id, m);
        await sessionFor(t, target.id, { scope: null });
        const actorUser = await createUser(t, { mfaEnabled: true });
        await seat(actorUser.id, actor);
        const session =
          actor.kind === 'partner'
            ? await sessionFor(
                t,
                actorUser.id,
                { scope: 'partner', partnerId: world.partner[actor.tenant], roleId: roleIdOf(actor) },
                true,
              )
            : await sessionFor(
                t,
                actorUser.id,
                {
                  scope: 'organization',
                  partnerId: world.partner[ORG_PARTNER[actor.org]],
                  orgId: world.org[actor.org],
                  roleId: roleIdOf(actor),
                },
                true,
              );
        const api = t.client().withToken(session.accessToken);
        const query =
          actor.kind === 'partner' && addressed.kind === 'organization'
            ? { orgId: world.org[addressed.org] }
            : undefined;
        const opts = query ? { query } : {};
        const before = await accountState(target.id);
        const r =
          action === 'mfa_reset'
            ? await api.raw.request('POST', `/users/${target.id}/mfa/reset`, opts)
            : await api.raw.request('PATCH', `/users/${target.id}`, {
                ...opts,
                body: action === 'disable' ? { status: 'disabled' } : { name: 'Changed' },
              });
        const after = await accountState(target.id);
        const authorised = memberships.every((m) => covers(actor, m));
        expect(r.status, r.text).toBeLessThan(500);
        if (!authorised) {
          expect(r.status, r.text).toBeGreaterThanOrEqual(400);
          expect(after).toEqual(before);
          if (r.body?.code === 'account_outside_authority') refusedOutside++;
        }
        if (r.status < 300) {
          expect(authorised).toBe(true);
          expect(after).not.toEqual(before);
          changed++;
        }
        // Holding users:write and covering the account, the action is the actor's (only last_admin may still stop
        // disabling the partner's one admin).
        const canWrite =
          world.perms.get(roleIdOf(actor))!.has('*:*') || world.perms.get(roleIdOf(actor))!.has('users:write');
        const fullReach = actor.kind === 'organization' || actor.orgAccess === 'all';
        if (authorised && canWrite && fullReach && r.status >= 300) expect(r.body.code, r.text).toBe('last_admin');
      }),
      {
        numRuns: 25,
        examples: [
          [
            {
              actor: { kind: 'partner', tenant: 'A', role: 'admin', orgAccess: 'all' },
              addressed: { kind: 'organization', org: 'X', role: 'viewer', sites: 'all' },
              others: [{ kind: 'partner', tenant: 'A', role: 'tech', orgAccess: 'all' }],
              action: 'rename',
            },
          ],
          [
            {
              actor: { kind: 'organization', org: 'X', role: 'admin', sites: 's1' },
              addressed: { kind: 'organization', org: 'X', role: 'viewer', sites: 's1' },
              others: [{ kind: 'partner', tenant: 'B', role: 'viewer', orgAccess: 'none' }],
              action: 'mfa_reset',
            },
          ],
        ],
      },
    );
    // Neither side of the property went unexercised.
    expect(changed).toBeGreaterThan(0);
    expect(refusedOutside).toBeGreaterThan(0);
  }, 120_000);
});
