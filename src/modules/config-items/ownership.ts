// Ownership of partner-wide configuration: a row belongs either to the partner (org_id null,
// in force in every organisation of the partner) or to one organisation. Shared by config items, scripts and
// custom-field definitions, so the three answer the same way: another tenant's row is 404, a partner-owned row is
// read by everyone of the partner and changed only by partner users with orgAccess `all`.
import { z } from 'zod';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { resolveTarget } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';

export type Source = 'partner' | 'organization';
export const sourceOf = (row: { orgId: string | null }): Source => (row.orgId ? 'organization' : 'partner');

/** Partner-owned rows are changed only by partner users who may act on every organisation they apply to. */
export function assertPartnerWide(p: Principal): void {
  if (p.tenantKind !== 'partner' || p.orgAccess !== 'all') throw new AppError('full_org_access_required');
}

/** Owner of a new row: the organisation named (an organisation caller: always its own), else the partner. */
export async function ownerForCreate(db: Executor, p: Principal, orgId: string | undefined): Promise<Target> {
  if (orgId === undefined && p.tenantKind === 'partner') assertPartnerWide(p);
  return resolveTarget(db, p, orgId);
}

/** The target of a list: the named organisation (or the org caller's own), else the partner level alone. */
export const listTarget = (db: Executor, p: Principal, orgId: string | undefined) => resolveTarget(db, p, orgId);

/** A found row may be changed: organisation-owned rows were already scoped by the query; partner-owned need full access. */
export function assertMayChange(p: Principal, row: { orgId: string | null }): void {
  if (row.orgId === null) assertPartnerWide(p);
}

// Strings that PostgreSQL cannot hold: NUL in text and jsonb, and lone UTF-16 surrogates in jsonb.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export const isStorable = (s: string) => !UNSTORABLE.test(s);
/** A string refused at the edge when the database could not store it (never a 500). */
export const storableString = () =>
  z.string().refine(isStorable, 'must not contain NUL characters or unpaired surrogates');
export const name255 = () =>
  z.string().trim().min(1).max(255).refine(isStorable, 'must not contain NUL characters or unpaired surrogates');

/** Every string (keys included) of a JSON value is storable, and it nests at most `maxDepth` levels. */
export function storableJson(value: unknown, maxDepth = 8, depth = 0): boolean {
  if (depth > maxDepth) return false;
  if (typeof value === 'string') return isStorable(value);
  if (typeof value === 'number') return Number.isFinite(value);
  if (value === null || typeof value === 'boolean') return true;
  if (Array.isArray(value)) return value.every((v) => storableJson(v, maxDepth, depth + 1));
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>).every(
      ([k, v]) => isStorable(k) && storableJson(v, maxDepth, depth + 1),
    );
  return false;
}

/** Keyset cursor of the lists ordered by a lower-cased name (db/order.ts lowerOf) and the id. */
export const nameCursor = z.object({ n: z.string(), id: z.uuid() });
