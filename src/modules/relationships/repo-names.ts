// The names a relationship is shown by (its organisation, partner, roles, sites, device groups, the people in its
// history), read in one query per kind for a whole page of relationships. A piece of repo.ts, split out for size.
import { asc, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { deviceGroups, organizations, partners, roles, sites, users } from '../../db/schema/index.js';

export type NameKind = 'organization' | 'partner' | 'role' | 'site' | 'deviceGroup' | 'user';

const TABLES = {
  organization: organizations,
  partner: partners,
  role: roles,
  site: sites,
  deviceGroup: deviceGroups,
  user: users,
} as const;

/** id → name for the ids of one kind (ids that no longer exist are absent). */
export async function namesOf(db: Executor, kind: NameKind, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const t = TABLES[kind];
  const rows = await db.select({ id: t.id, name: t.name }).from(t).where(inArray(t.id, unique));
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** Every site and device group of an organisation, by name: what a relationship's reach is chosen from. */
export async function orgReachOptions(db: Executor, orgId: string) {
  const [siteRows, groupRows] = await Promise.all([
    db.select({ id: sites.id, name: sites.name }).from(sites).where(eq(sites.orgId, orgId)).orderBy(asc(sites.name)),
    db
      .select({ id: deviceGroups.id, name: deviceGroups.name })
      .from(deviceGroups)
      .where(eq(deviceGroups.orgId, orgId))
      .orderBy(asc(deviceGroups.name)),
  ]);
  return { sites: siteRows, deviceGroups: groupRows };
}
