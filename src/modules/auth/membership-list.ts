// The caller's memberships with names, for choosing where to switch (POST /auth/switch-context).
import { z } from 'zod';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { listMemberships } from '../identity/index.js';
import { namesOf } from './repo.js';

export const membershipJson = z
  .object({
    scope: z.enum(['partner', 'organization']),
    partnerId: z.uuid(),
    partnerName: z.string(),
    orgId: z.uuid().nullable(),
    orgName: z.string().nullable(),
    roleId: z.uuid(),
    roleName: z.string(),
    lastUsedAt: z.string().nullable(),
    current: z.boolean().describe('The membership the calling session acts in'),
  })
  .meta({ id: 'Membership' });
export type MembershipJson = z.infer<typeof membershipJson>;

/** Partner memberships first, then organisations, each by name. */
export async function listOwnMemberships(db: Executor, p: Principal): Promise<{ data: MembershipJson[] }> {
  const list = await listMemberships(db, p.userId);
  const unique = (xs: (string | null)[]) => [...new Set(xs.filter((x): x is string => x !== null))];
  const [partnerNames, orgNames, roleNames] = await Promise.all([
    namesOf(db, 'partners', unique(list.map((m) => m.partnerId))),
    namesOf(db, 'organizations', unique(list.map((m) => m.orgId))),
    namesOf(db, 'roles', unique(list.map((m) => m.roleId))),
  ]);
  const data = list
    .filter(
      (m): m is typeof m & { scope: 'partner' | 'organization'; partnerId: string; roleId: string } =>
        m.scope !== null && m.partnerId !== null && m.roleId !== null,
    )
    .map((m) => ({
      scope: m.scope,
      partnerId: m.partnerId,
      partnerName: partnerNames.get(m.partnerId) ?? '',
      orgId: m.orgId,
      orgName: m.orgId ? (orgNames.get(m.orgId) ?? '') : null,
      roleId: m.roleId,
      roleName: roleNames.get(m.roleId) ?? '',
      lastUsedAt: m.lastUsedAt?.toISOString() ?? null,
      current: m.scope === p.tenantKind && (m.scope === 'partner' ? m.partnerId === p.partnerId : m.orgId === p.orgId),
    }))
    .sort((a, b) =>
      a.scope === b.scope
        ? (a.orgName ?? a.partnerName).localeCompare(b.orgName ?? b.partnerName)
        : a.scope === 'partner'
          ? -1
          : 1,
    );
  return { data };
}
