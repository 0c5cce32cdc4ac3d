// The blast-radius governor: per principal (a person or a service account), budgets over sliding windows on its
// destructive actions: distinct organisations touched, distinct devices affected, uses of destructive permissions.
// The partner's budget holds its staff and service accounts everywhere; an organisation's holds everyone acting in it,
// on top of the partner's (both are checked: the stricter wins). Over a budget the action is refused with what unlocks
// it: a fresh passkey step-up (a person), or a co-signature another Partner Admin approved (its next N actions).
// None is set by default, and a non-destructive decision never reaches the store.
import { randomUUID } from 'node:crypto';
import type { Executor } from '../db/connect.js';
import { spendCoSign } from '../db/governor.js';
import type { BudgetCheck, BudgetDimension, BudgetStore } from '../platform/budget-store.js';
import type { Clock } from '../platform/clock.js';
import { isDestructive } from './catalog.js';
import type { GovernorCache, PartnerGovernance } from './governor-cache.js';
import type { Budget } from './governor-settings.js';
import { speaksForPartner, type Principal } from './principal.js';
import { type AccessReason, type BudgetUse, deny, pass } from './reasons.js';

/** Marks are kept for the longest window a budget may have (a day). */
const KEEP_MS = 1440 * 60_000;

const LIMITS: Record<BudgetDimension, keyof Budget> = {
  organizations: 'maxOrganizations',
  devices: 'maxDevices',
  destructive: 'maxDestructive',
};
const NOUN: Record<BudgetDimension, string> = {
  organizations: 'distinct organisations',
  devices: 'distinct devices',
  destructive: 'destructive actions',
};

/** What the governor noted during a request, written to the audit trail once the answer is sent. */
export interface GovernorEvent {
  kind: 'budget_exceeded' | 'step_up_unlock' | 'co_sign_unlock';
  permissions: string[];
  orgId: string | null;
  budget: BudgetUse;
  coSignId?: string;
  remaining?: number;
  /** Charged to another principal than the caller: the subject of an authorization API evaluation. */
  subject?: { type: string; id: string };
}

/** Where a destructive action lands: its organisation (null: a partner record) and the devices it affects. */
export interface GovernedTarget {
  orgId: string | null;
  deviceIds?: readonly string[];
}

export interface GovernorDeps {
  store: BudgetStore;
  cache: GovernorCache;
  clock: Clock;
  /** STEP_UP_MAX_AGE in seconds: how fresh a passkey proof must be to unlock a budget. */
  stepUpMaxAge: number;
}

/** The budgets bearing on a principal's action in `orgId`: its partner's (if it speaks for the partner) and the organisation's. */
export function budgetsFor(
  g: PartnerGovernance,
  p: Principal,
  orgId: string | null,
): { setBy: 'partner' | 'organization'; budget: Budget }[] {
  const out: { setBy: 'partner' | 'organization'; budget: Budget }[] = [];
  if (g.budget && speaksForPartner(p)) out.push({ setBy: 'partner', budget: g.budget });
  const org = orgId ?? (p.tenantKind === 'organization' ? p.orgId : null);
  const own = org ? g.orgBudgets.get(org) : undefined;
  if (own) out.push({ setBy: 'organization', budget: own });
  return out;
}

type Check = BudgetCheck & { use: Omit<BudgetUse, 'used'> };

function checksOf(budgets: ReturnType<typeof budgetsFor>, now: number): Check[] {
  const out: Check[] = [];
  for (const { setBy, budget } of budgets) {
    for (const dimension of Object.keys(LIMITS) as BudgetDimension[]) {
      const limit = budget[LIMITS[dimension]] as number | undefined;
      if (limit === undefined) continue;
      out.push({
        dimension,
        limit,
        sinceMs: now - budget.windowMinutes * 60_000,
        use: { setBy, dimension, limit, windowMinutes: budget.windowMinutes },
      });
    }
  }
  return out;
}

const principalKey = (p: Principal) => `${p.actorType}:${p.userId}`;
const describe = (u: BudgetUse) =>
  `${u.used} of ${u.limit} ${NOUN[u.dimension]} in ${u.windowMinutes} minutes (the ${u.setBy === 'partner' ? "partner's" : "organisation's"} budget)`;

export class Governor {
  constructor(private readonly deps: GovernorDeps) {}

  get cache(): GovernorCache {
    return this.deps.cache;
  }

  /**
   * Charges the principal's destructive action (`permissions` asked, any of them destructive) on the target, and
   * answers the `budget` step: within budget, let through by a fresh passkey step-up or a co-signature (both counted
   * and audited), or refused with what unlocks it. Null when no budget bears on it (or nothing asked is destructive).
   * `ex` is the request's executor: in the database store the marks and a spent co-signature commit with the action.
   */
  async charge(
    ex: Executor,
    p: Principal,
    permissions: readonly string[],
    target: GovernedTarget,
  ): Promise<AccessReason | null> {
    const destructive = permissions.filter(isDestructive);
    if (destructive.length === 0) return null;
    const g = await this.deps.cache.of(p.partnerId, p.epoch);
    const now = this.deps.clock.now().getTime();
    const checks = checksOf(budgetsFor(g, p, target.orgId), now);
    if (checks.length === 0) return null;
    // One use per request, however many records it reaches: the request's use id is one member.
    p.governorUseId ??= randomUUID();
    const charge = {
      principal: principalKey(p),
      members: {
        organizations: target.orgId ? [target.orgId] : [],
        devices: [...new Set(target.deviceIds ?? [])],
        destructive: [p.governorUseId],
      },
      checks,
      nowMs: now,
      keepMs: KEEP_MS,
    };
    const steppedUp = this.freshPasskey(p, now);
    const outcome = await this.deps.store.charge({ ...charge, mark: steppedUp ? 'always' : 'within' }, ex);
    const uses = checks.map((c, i) => ({ ...c.use, used: outcome.counts[i]! }));
    if (outcome.tripped < 0) {
      const closest = uses.reduce((a, b) => (b.used / b.limit > a.used / a.limit ? b : a));
      return pass('budget', `Within budget: ${describe(closest)}.`, { budget: closest });
    }
    const use = uses[outcome.tripped]!;
    const event = { permissions: destructive, orgId: target.orgId, budget: use };
    if (steppedUp) {
      (p.governorEvents ??= []).push({ kind: 'step_up_unlock', ...event });
      return pass('budget', `Over budget: ${describe(use)}; a fresh passkey step-up lets it through (audited).`, {
        budget: use,
      });
    }
    const coSign = await spendCoSign(ex, p.userId, new Date(now));
    if (coSign) {
      await this.deps.store.charge({ ...charge, mark: 'always' }, ex);
      (p.governorEvents ??= []).push({
        kind: 'co_sign_unlock',
        ...event,
        coSignId: coSign.id,
        remaining: coSign.remaining,
      });
      return pass(
        'budget',
        `Over budget: ${describe(use)}; let through by a co-signature${coSign.approved_by_name ? ` of ${coSign.approved_by_name}` : ''} (${coSign.remaining} action(s) left on it).`,
        { budget: use, requires: 'co_sign' },
      );
    }
    (p.governorEvents ??= []).push({ kind: 'budget_exceeded', ...event });
    const requires = this.requires(p);
    return deny(
      'budget',
      `Over budget: ${describe(use)}. ${requires === 'step_up' ? 'A fresh step-up with a passkey (POST /auth/step-up) or a co-signature by another Partner Admin unlocks it.' : 'A co-signature by another Partner Admin (POST /governor/co-signs) unlocks it.'}`,
      { budget: use, requires },
    );
  }

  /** The `budget` step as the next such action would meet it, counting only (GET /access/explain, the console). */
  async peek(ex: Executor, p: Principal, permission: string, target: GovernedTarget): Promise<AccessReason | null> {
    if (!isDestructive(permission)) return null;
    const g = await this.deps.cache.of(p.partnerId, p.epoch);
    const now = this.deps.clock.now().getTime();
    const checks = checksOf(budgetsFor(g, p, target.orgId), now);
    if (checks.length === 0) return null;
    const outcome = await this.deps.store.charge(
      {
        principal: principalKey(p),
        members: {
          organizations: target.orgId ? [target.orgId] : [],
          devices: [...new Set(target.deviceIds ?? [])],
          destructive: [randomUUID()],
        },
        checks,
        nowMs: now,
        keepMs: KEEP_MS,
        mark: 'never',
      },
      ex,
    );
    const uses = checks.map((c, i) => ({ ...c.use, used: outcome.counts[i]! }));
    if (outcome.tripped < 0) {
      const closest = uses.reduce((a, b) => (b.used / b.limit > a.used / a.limit ? b : a));
      return pass('budget', `Within budget with this action: ${describe(closest)}.`, { budget: closest });
    }
    const use = uses[outcome.tripped]!;
    return deny('budget', `This action would be over budget: ${describe(use)}.`, {
      budget: use,
      requires: this.requires(p),
    });
  }

  /** What unlocks an exceeded budget: a person steps up with a passkey; a key proves no presence, so it is co-signed. */
  requires(p: Principal): 'step_up' | 'co_sign' {
    return p.actorType === 'user' ? 'step_up' : 'co_sign';
  }

  private freshPasskey(p: Principal, now: number): boolean {
    return (
      p.actorType === 'user' &&
      p.authPhishingResistant === true &&
      p.authTime !== null &&
      now - p.authTime.getTime() <= this.deps.stepUpMaxAge * 1000
    );
  }
}
