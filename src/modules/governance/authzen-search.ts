// The authorization API's searches: which subjects may use a permission on a record, which records a subject may use
// it on, which permissions a subject holds on a record. The database narrows the candidates and pages through them
// (keyset, in id order); each candidate of the page is then decided as an evaluation decides it, so every result is
// one an evaluation allows, and a page may hold fewer than `limit` results while `next_token` goes on.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, encodeCursor } from '../../http/pagination.js';
import { hasPermission } from '../../access/resolver.js';
import {
  candidateAccounts,
  candidateRecords,
  candidateUsers,
  decisionEpoch,
  subjectReachRows,
  type RecordType,
  type SearchReach,
} from './repo.js';
import { serviceAccountSubjects, userSubjects } from './subjects.js';
import {
  decideSubject,
  loadTargets,
  permissionOf,
  resourceTypeOf,
  subjectsFor,
  subjectTypeOf,
  targetOf,
  type Target,
} from './authzen-service.js';
import {
  PERMISSION_KEYS,
  type ActionSearchBody,
  type ResourceSearchBody,
  type SubjectSearchBody,
} from './authzen-schemas.js';

const DEFAULT_LIMIT = 50;

// ---- Paging: an opaque token bound to the request it continues ----

const tokenSchema = z.object({ a: z.string().max(64), l: z.number().int().min(1).max(200), h: z.string().length(16) });

/**
 * The request without its page, as a stable digest: a token continues only the request it came from. The page size
 * travels in the token (a continuing request may leave `limit` out, as the standard's example does).
 */
function requestDigest(body: Record<string, unknown>): string {
  const { page: _page, ...rest } = body as { page?: unknown };
  const canonical = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v as object)
            .sort()
            .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
        )
      : v;
  return createHash('sha256')
    .update(JSON.stringify(canonical(rest)))
    .digest('base64url')
    .slice(0, 16);
}

function pageIn(body: Record<string, unknown>) {
  const page = (body.page ?? {}) as { token?: string; limit?: number };
  const h = requestDigest(body);
  let after: string | null = null;
  let limit = page.limit ?? DEFAULT_LIMIT;
  if (page.token) {
    let decoded: z.infer<typeof tokenSchema> | null = null;
    try {
      decoded = decodeCursor(page.token, tokenSchema);
    } catch {
      decoded = null;
    }
    if (!decoded || decoded.h !== h || (page.limit !== undefined && page.limit !== decoded.l))
      throw new AppError(
        'validation_failed',
        'The page token is not valid, or the request changed since the first page.',
        {
          details: { fieldErrors: { 'page.token': ['Invalid or for another request'] }, formErrors: [] },
        },
      );
    after = decoded.a;
    limit = decoded.l;
  }
  return { after, limit, h };
}

const pageOut = (count: number, next: string | null, p: { h: string; limit: number }) => ({
  next_token: next === null ? '' : encodeCursor({ a: next, l: p.limit, h: p.h }),
  count,
});

// ---- Subject search ----

export async function searchSubjects(deps: Deps, caller: Principal, body: SubjectSearchBody) {
  const type = subjectTypeOf(body.subject.type);
  const permission = permissionOf(body.action.name);
  const ref = { type: resourceTypeOf(body.resource.type), id: body.resource.id };
  const pg = pageIn(body);
  const { after, limit } = pg;
  const epoch = await decisionEpoch(deps.db);
  const t = (await loadTargets(deps, caller, [ref], epoch)).get(`${ref.type}:${ref.id}`);
  // Another partner's record answers as one that does not exist: nobody.
  if (!t) return { page: pageOut(0, null, pg), context: { epoch }, results: [] };
  const ids =
    type === 'user'
      ? await candidateUsers(deps.db, t, permission, after, limit + 1)
      : await candidateAccounts(deps.db, t, permission, after, limit + 1);
  const page = ids.slice(0, limit);
  const now = deps.clock.now().getTime();
  const results: { type: typeof type; id: string }[] = [];
  if (type === 'user') {
    const subjects = await userSubjects(
      deps.db,
      deps.roleCache,
      deps.config.enable2fa,
      page,
      t.owner.partnerId,
      t.owner.orgId,
      now,
    );
    for (const id of page) if (decideSubject(subjects.get(id) ?? [], permission, t).allowed) results.push({ type, id });
  } else {
    const accounts = await serviceAccountSubjects(deps.db, deps.roleCache, page, t.owner.partnerId, t.owner.orgId, now);
    for (const id of page) {
      const s = accounts.get(id);
      if (s && decideSubject([s], permission, t).allowed) results.push({ type, id });
    }
  }
  const next = ids.length > limit ? page[page.length - 1]! : null;
  return { page: pageOut(results.length, next, pg), context: { epoch }, results };
}

// ---- Resource search ----

/** How far the subject's memberships holding the permission reach (a superset: the decision runs on each record). */
async function searchReach(
  deps: Deps,
  subject: { type: 'user' | 'service_account'; id: string },
  partnerId: string,
  permission: string,
): Promise<SearchReach> {
  const rows = await subjectReachRows(deps.db, subject.type, subject.id, partnerId);
  const reach: SearchReach = { partnerOrgs: 'none', orgMemberships: [] };
  for (const r of rows) {
    const role = r.role_id ? await deps.roleCache.get(r.role_id, Number(r.authz_epoch)) : null;
    if (!role || !hasPermission(role.permissions, permission)) continue;
    if (r.scope === 'account') {
      if (r.org_id) reach.orgMemberships.push({ orgId: r.org_id, siteIds: null, groupIds: null });
      else reach.partnerOrgs = null;
    } else if (r.scope === 'partner') {
      const granted = r.grant_org_ids ?? [];
      reach.partnerOrgs =
        r.org_access === 'all'
          ? null
          : [...new Set([...(r.org_access === 'selected' ? (r.org_ids ?? []) : []), ...granted])];
    } else if (r.org_id) {
      reach.orgMemberships.push({ orgId: r.org_id, siteIds: r.site_ids, groupIds: r.group_ids });
    }
  }
  return reach;
}

export async function searchResources(deps: Deps, caller: Principal, body: ResourceSearchBody) {
  const subject = {
    type: subjectTypeOf(body.subject.type),
    id: body.subject.id,
    ip: body.subject.properties?.ip_address ?? null,
  };
  const permission = permissionOf(body.action.name);
  const type = resourceTypeOf(body.resource.type);
  const orgId = body.resource.properties?.organization_id ?? null;
  const pg = pageIn(body);
  const { after, limit } = pg;
  const epoch = await decisionEpoch(deps.db);
  const partnerId = caller.partnerId!;
  if (type === 'partner') {
    const t = (await loadTargets(deps, caller, [{ type, id: partnerId }], epoch)).get(`partner:${partnerId}`);
    if (!t || after) return { page: pageOut(0, null, pg), context: { epoch }, results: [] };
    const subjectsOf = await subjectsFor(deps, caller, epoch, [{ subject, target: t }]);
    const allowed = decideSubject(subjectsOf(subject, t), permission, t).allowed;
    return {
      page: pageOut(allowed ? 1 : 0, null, pg),
      context: { epoch },
      results: allowed ? [{ type, id: partnerId }] : [],
    };
  }
  // An organisation's account asks about its own organisation only.
  if (caller.tenantKind === 'organization' && orgId && orgId !== caller.orgId)
    return { page: pageOut(0, null, pg), context: { epoch }, results: [] };
  const scopedOrg = caller.tenantKind === 'organization' ? caller.orgId : orgId;
  const reach = await searchReach(deps, subject, partnerId, permission);
  const rows = await candidateRecords(deps.db, type as RecordType, partnerId, scopedOrg, reach, after, limit + 1);
  const page = rows.slice(0, limit).map((r) => targetOf(type as RecordType, r));
  const subjectsOf = await subjectsFor(
    deps,
    caller,
    epoch,
    page.map((target) => ({ subject, target })),
  );
  const results = page
    .filter((t) => decideSubject(subjectsOf(subject, t), permission, t).allowed)
    .map((t) => ({ type, id: t.id }));
  const next = rows.length > limit ? page[page.length - 1]!.id : null;
  return { page: pageOut(results.length, next, pg), context: { epoch }, results };
}

// ---- Action search ----

export async function searchActions(deps: Deps, caller: Principal, body: ActionSearchBody) {
  const subject = {
    type: subjectTypeOf(body.subject.type),
    id: body.subject.id,
    ip: body.subject.properties?.ip_address ?? null,
  };
  const ref = { type: resourceTypeOf(body.resource.type), id: body.resource.id };
  const pg = pageIn(body);
  const { after, limit } = pg;
  const epoch = await decisionEpoch(deps.db);
  const t: Target | undefined = (await loadTargets(deps, caller, [ref], epoch)).get(`${ref.type}:${ref.id}`);
  if (!t) return { page: pageOut(0, null, pg), context: { epoch }, results: [] };
  const subjects = (await subjectsFor(deps, caller, epoch, [{ subject, target: t }]))(subject, t);
  const start = after === null ? 0 : Number(after);
  if (!Number.isInteger(start) || start < 0) throw new AppError('validation_failed', 'The page token is not valid.');
  const keys = PERMISSION_KEYS.slice(start, start + limit);
  const results = keys.filter((k) => decideSubject(subjects, k, t).allowed).map((name) => ({ name }));
  const end = start + keys.length;
  return {
    page: pageOut(results.length, end < PERMISSION_KEYS.length ? String(end) : null, pg),
    context: { epoch },
    results,
  };
}
