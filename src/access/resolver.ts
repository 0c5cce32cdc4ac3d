// Effective permissions of a role: its own plus its ancestors' (single-parent chain of at most 16 roles).
// Cached per role; the cache is keyed by the authz epoch that every request reads with its session check,
// so a change made on any instance is seen by the next request everywhere.
import type { Executor } from '../db/connect.js';
import { roleChainRows } from './repo.js';

export const MAX_ROLE_DEPTH = 16;

export interface ResolvedRole {
  roleId: string;
  name: string;
  /** Strictest wins: true when the role or any ancestor has Force MFA on. */
  forceMfa: boolean;
  /** Strictest wins: only passkeys satisfy MFA for holders. */
  phishingResistantOnly: boolean;
  permissions: ReadonlySet<string>;
  chain: { id: string; name: string }[];
  /** Each permission with the nearest role in the chain that grants it. */
  sources: { resource: string; action: string; roleId: string; roleName: string; depth: number }[];
}

export async function loadRoleChain(db: Executor, roleId: string): Promise<ResolvedRole | null> {
  const rows = await roleChainRows(db, roleId, MAX_ROLE_DEPTH);
  if (rows.length === 0) return null;
  const chain: { id: string; name: string }[] = [];
  const seen = new Map<string, ResolvedRole['sources'][number]>();
  let forceMfa = false;
  let phishingResistantOnly = false;
  for (const row of rows) {
    const id = row.role_id as string;
    if (!chain.some((c) => c.id === id)) chain.push({ id, name: row.name as string });
    forceMfa ||= row.force_mfa === true;
    phishingResistantOnly ||= row.phishing_resistant_only === true;
    if (row.resource == null) continue;
    const key = `${row.resource}:${row.action}`;
    if (!seen.has(key))
      seen.set(key, {
        resource: row.resource as string,
        action: row.action as string,
        roleId: id,
        roleName: row.name as string,
        depth: Number(row.depth),
      });
  }
  return {
    roleId,
    name: chain[0]!.name,
    forceMfa,
    phishingResistantOnly,
    permissions: new Set(seen.keys()),
    chain,
    sources: [...seen.values()],
  };
}

export class RoleCache {
  private epoch = -1;
  private readonly roles = new Map<string, Promise<ResolvedRole | null>>();

  constructor(private readonly db: Executor) {}

  async get(roleId: string, epoch: number): Promise<ResolvedRole | null> {
    if (epoch !== this.epoch) {
      this.roles.clear();
      this.epoch = epoch;
    }
    let hit = this.roles.get(roleId);
    if (!hit) {
      hit = loadRoleChain(this.db, roleId);
      this.roles.set(roleId, hit);
      hit.catch(() => this.roles.delete(roleId));
    }
    return hit;
  }
}

export function hasPermission(perms: ReadonlySet<string>, required: string): boolean {
  return perms.has('*:*') || perms.has(required);
}

/** The permissions of `wanted` that `held` does not cover (the ceiling: nobody grants or administers beyond it). */
export function beyondCeiling(held: ReadonlySet<string>, wanted: Iterable<string>): string[] {
  if (held.has('*:*')) return [];
  return [...wanted].filter((k) => !hasPermission(held, k));
}
