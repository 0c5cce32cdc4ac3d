// Data setup for the access-governance tests: custom role chains inserted as the roles service leaves them.
// The routes under test (explain, who-can, and the routes whose answers they must agree with) run through HTTP.
import { randomBytes } from 'node:crypto';
import { and, eq, or } from 'drizzle-orm';
import { permissions, rolePermissions, roles } from '../../src/db/schema/index.js';
import type { TestApp } from './app.js';

export interface RoleSpec {
  /** Custom roles of a partner (for partner members) or of an organisation (for its members). */
  owner: { kind: 'partner'; partnerId: string } | { kind: 'organization'; orgId: string };
  parentRoleId?: string | null;
  permissions: string[];
  forceMfa?: boolean;
  name?: string;
}

/** A custom role holding `permissions` directly (`*:*` included if given), under `parentRoleId`. */
export async function createRole(t: TestApp, spec: RoleSpec) {
  const db = t.deps.db;
  const owner =
    spec.owner.kind === 'partner'
      ? { scope: 'partner' as const, appliesTo: 'partner' as const, partnerId: spec.owner.partnerId }
      : { scope: 'organization' as const, appliesTo: 'organization' as const, orgId: spec.owner.orgId };
  const [role] = await db
    .insert(roles)
    .values({
      ...owner,
      name: spec.name ?? `Role ${randomBytes(4).toString('hex')}`,
      parentRoleId: spec.parentRoleId ?? null,
      forceMfa: spec.forceMfa ?? false,
    })
    .returning();
  if (spec.permissions.length) {
    const wanted = spec.permissions.map((k) => k.split(':') as [string, string]);
    const rows = await db
      .select({ id: permissions.id })
      .from(permissions)
      .where(or(...wanted.map(([r, a]) => and(eq(permissions.resource, r), eq(permissions.action, a)))));
    if (rows.length !== new Set(spec.permissions).size)
      throw new Error(`unknown permission among ${spec.permissions.join(', ')}`);
    await db.insert(rolePermissions).values(rows.map((p) => ({ roleId: role!.id, permissionId: p.id })));
  }
  return role!;
}

/** A chain of custom roles, root first; returns the leaf (the one to assign) and the chain. */
export async function createRoleChain(
  t: TestApp,
  owner: RoleSpec['owner'],
  links: { permissions: string[]; forceMfa?: boolean }[],
  rootParentId: string | null = null,
) {
  const chain = [];
  let parent = rootParentId;
  for (const link of links) {
    const role = await createRole(t, { owner, parentRoleId: parent, ...link });
    chain.push(role);
    parent = role.id;
  }
  return { leaf: chain[chain.length - 1]!, chain };
}
