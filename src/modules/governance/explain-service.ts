// GET /access/explain and GET /access/who-can: "why can X do Y on Z", answered by the decision functions
// the request pipeline itself runs (decision.ts), over principals built by the pipeline's own builders (subjects.ts).
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { decodeCursor, encodeCursor } from '../../http/pagination.js';
import { DEVICE, DEVICE_GROUP, ORGANIZATION, SITE, covers, type ByIdResource } from '../tenants/index.js';
import {
  accountReason,
  decide,
  decisionOf,
  deny,
  type AccessDecision,
  type Owner,
  type PartnerOwned,
  type Siteless,
} from '../../access/decision.js';
import { cursorSchema, type ExplainQuery, type ResourceType, type WhoCanQuery } from './schemas.js';
import { candidateAccounts, candidateUsers, partnerOrgMember } from './repo.js';
import { serviceAccountSubjects, userSubjects, type Subject } from './subjects.js';

const RESOURCES: Record<Exclude<ResourceType, 'partner'>, ByIdResource<unknown>> = {
  organization: ORGANIZATION,
  site: SITE,
  device_group: DEVICE_GROUP,
  device: DEVICE,
} as Record<Exclude<ResourceType, 'partner'>, ByIdResource<unknown>>;

interface Target {
  type: ResourceType;
  id: string;
  owner: Owner;
  partnerOwned: PartnerOwned;
  siteless: Siteless;
}

/** The record, when the caller's own scope covers it (the one by-id rule); 404 otherwise, as on its own routes. */
async function resolveTarget(deps: Deps, caller: Principal, type: ResourceType, id: string): Promise<Target> {
  if (!caller.partnerId) throw new AppError('tenant_context_required');
  if (type === 'partner') {
    // The partner itself is a partner-only record: its members reach it, an organisation's do not.
    const owner: Owner = { partnerId: id, orgId: null };
    if (!covers(caller, owner, 'partner-only', 'visible')) throw notFound('partner');
    return { type, id, owner, partnerOwned: 'partner-only', siteless: 'visible' };
  }
  const res = RESOURCES[type];
  const found = await res.load(deps.db, id);
  if (!found || !covers(caller, found.owner, res.partnerOwned, res.siteless)) throw notFound(res.what);
  return { type, id, owner: found.owner, partnerOwned: res.partnerOwned, siteless: res.siteless };
}

/**
 * One membership's (or account's) decision on the target: the account's state first, then what a request passes.
 * Explain, who-can and the authorization API (/access/v1) all decide through this.
 */
export function decideFor(
  s: Subject,
  permission: string,
  t: Pick<Target, 'owner' | 'partnerOwned' | 'siteless'>,
): AccessDecision {
  const account = accountReason(s.status);
  if (!account.allowed) return decisionOf([account]);
  const d = decide(s.principal, permission, t.owner, t.partnerOwned, t.siteless, s.role);
  return decisionOf([account, ...d.reasons]);
}

function membershipJson(s: Subject, d: AccessDecision) {
  const p = s.principal;
  return {
    scope: p.tenantKind!,
    partnerId: p.partnerId!,
    orgId: p.orgId,
    roleId: p.roleId!,
    roleName: p.roleName ?? '',
    allowed: d.allowed,
    deniedBy: d.deniedBy,
    reasons: d.reasons,
  };
}

const resourceJson = (t: Target) => ({ type: t.type, id: t.id, partnerId: t.owner.partnerId, orgId: t.owner.orgId });

export async function explain(deps: Deps, caller: Principal, q: ExplainQuery) {
  const t = await resolveTarget(deps, caller, q.resourceType, q.resourceId);
  let subjects: Subject[];
  let subject: { type: 'user' | 'service_account'; id: string; name: string; email: string | null };
  if (q.userId) {
    subjects =
      (
        await userSubjects(
          deps.db,
          deps.roleCache,
          deps.config.enable2fa,
          [q.userId],
          t.owner.partnerId,
          t.owner.orgId,
          deps.clock.now().getTime(),
          q.ip ?? null,
        )
      ).get(q.userId) ?? [];
    if (subjects.length === 0) {
      // A member elsewhere in the partner (another organisation) is denied at the membership step; a partner caller sees
      // every organisation's members. Anyone else: the same 404 whether or not the user exists.
      const elsewhere =
        caller.tenantKind === 'partner' ? await partnerOrgMember(deps.db, q.userId, t.owner.partnerId) : null;
      if (!elsewhere) throw notFound('user');
      const reasons = [
        accountReason(elsewhere.status),
        deny('membership', 'No membership bearing on the record: a member of other organisations of the partner only.'),
      ];
      const d = decisionOf(reasons);
      return {
        allowed: false,
        deniedBy: d.deniedBy,
        reasons,
        subject: { type: 'user' as const, id: q.userId, name: elsewhere.name, email: elsewhere.email },
        permission: q.permission,
        resource: resourceJson(t),
        memberships: [],
      };
    }
    subject = {
      type: 'user',
      id: q.userId,
      name: subjects[0]!.principal.user?.name ?? '',
      email: subjects[0]!.principal.email,
    };
  } else {
    const sa = (
      await serviceAccountSubjects(
        deps.db,
        deps.roleCache,
        [q.serviceAccountId!],
        t.owner.partnerId,
        t.owner.orgId,
        deps.clock.now().getTime(),
      )
    ).get(q.serviceAccountId!);
    if (!sa) throw notFound('service account');
    subjects = [sa];
    subject = {
      type: 'service_account',
      id: sa.principal.userId,
      name: sa.principal.serviceAccount!.name,
      email: null,
    };
  }
  // The freezes in force, and the budget the next such action would meet, as the pipeline weighs them.
  for (const s of subjects) await deps.governor.cache.attach(s.principal);
  const memberships = [];
  for (const s of subjects) {
    const d = decideFor(s, q.permission, t);
    const budget = d.allowed
      ? await deps.governor.peek(deps.db, s.principal, q.permission, {
          orgId: t.owner.orgId,
          deviceIds: t.type === 'device' ? [t.id] : [],
        })
      : null;
    memberships.push(membershipJson(s, budget ? decisionOf([...d.reasons, budget]) : d));
  }
  // The membership that allows (a person acts in one membership per session); else the first, organisation first.
  const chosen = memberships.find((m) => m.allowed) ?? memberships[0]!;
  return {
    allowed: chosen.allowed,
    deniedBy: chosen.deniedBy,
    reasons: chosen.reasons,
    subject,
    permission: q.permission,
    resource: resourceJson(t),
    memberships,
  };
}

export async function whoCan(deps: Deps, caller: Principal, q: WhoCanQuery) {
  const t = await resolveTarget(deps, caller, q.resourceType, q.resourceId);
  const after = decodeCursor(q.cursor, cursorSchema);
  const data: ReturnType<typeof rowJson>[] = [];
  let next: { k: 'u' | 's'; id: string } | null = null;

  let budget = q.limit;
  if (!after || after.k === 'u') {
    const ids = await candidateUsers(deps.db, t, q.permission, after?.id ?? null, budget + 1);
    const page = ids.slice(0, budget);
    const subjects = await userSubjects(
      deps.db,
      deps.roleCache,
      deps.config.enable2fa,
      page,
      t.owner.partnerId,
      t.owner.orgId,
      deps.clock.now().getTime(),
    );
    for (const id of page) {
      const allowed = (subjects.get(id) ?? [])
        .map((s) => ({ s, d: decideFor(s, q.permission, t) }))
        .find((x) => x.d.allowed);
      if (allowed && throughRelationship(allowed.d, q.relationshipId)) data.push(rowJson('user', allowed.s, allowed.d));
    }
    if (ids.length > budget) next = { k: 'u', id: page[page.length - 1]! };
    budget -= page.length;
  }
  if (!next && budget > 0) {
    const ids = await candidateAccounts(deps.db, t, q.permission, after?.k === 's' ? after.id : null, budget + 1);
    const page = ids.slice(0, budget);
    const subjects = await serviceAccountSubjects(
      deps.db,
      deps.roleCache,
      page,
      t.owner.partnerId,
      t.owner.orgId,
      deps.clock.now().getTime(),
    );
    for (const id of page) {
      const s = subjects.get(id);
      const d = s && decideFor(s, q.permission, t);
      if (s && d?.allowed && throughRelationship(d, q.relationshipId)) data.push(rowJson('service_account', s, d));
    }
    if (ids.length > budget) next = { k: 's', id: page[page.length - 1]! };
  } else if (!next && budget === 0) {
    // The page is full of people: accounts, if any, start the next page.
    next = { k: 's', id: '00000000-0000-0000-0000-000000000000' };
  }
  return { permission: q.permission, resource: resourceJson(t), data, nextCursor: next ? encodeCursor(next) : null };
}

function rowJson(type: 'user' | 'service_account', s: Subject, d: AccessDecision) {
  const p = s.principal;
  return {
    subjectType: type,
    id: p.userId,
    name: type === 'user' ? (p.user?.name ?? '') : p.serviceAccount!.name,
    email: type === 'user' ? p.email : null,
    scope: p.tenantKind!,
    roleId: p.roleId!,
    roleName: p.roleName ?? '',
    relationships: relationshipsUsed(p, d),
    reasons: d.reasons,
  };
}

/** No filter, or the decision lets the subject in through that relationship. */
const throughRelationship = (d: AccessDecision, relationshipId: string | undefined) =>
  !relationshipId ||
  d.reasons.some((r) => r.step === 'relationship' && r.allowed && r.relationshipIds?.includes(relationshipId));

/** The relationships (and access groups) named by the decision's relationship step, with their names. */
function relationshipsUsed(p: Principal, d: AccessDecision) {
  const step = d.reasons.find((r) => r.step === 'relationship' && r.allowed);
  const groupIds = new Set(step?.accessGroupIds ?? []);
  return (p.relationships ?? [])
    .filter((r) => step?.relationshipIds?.includes(r.id))
    .map((r) => ({
      id: r.id,
      name: r.name,
      endsAt: r.endsAt.toISOString(),
      accessGroups: r.groups.filter((g) => groupIds.has(g.id)),
    }));
}
