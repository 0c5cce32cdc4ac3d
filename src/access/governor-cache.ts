// What the blast-radius governor weighs, kept by this instance per authorisation epoch: the freezes in force and each
// partner's governor settings (budgets, co-signature policy). A freeze, a thaw or a change of governor settings bumps
// the epoch in its transaction, and every request reads the epoch with its session (or key) check, so the next
// decision on every instance sees the change; while the epoch stands still a request reads none of it from the database.
import type { Db } from '../db/connect.js';
import { asSystem } from '../db/row-security.js';
import { CO_SIGN_DEFAULTS, governorSettingsSchema, type Budget } from './governor-settings.js';
import type { FreezeInfo, Principal, TenantFreezes } from './principal.js';
import { governorRows } from './repo.js';

/** Everything the governor weighs for one partner and its organisations. */
export interface PartnerGovernance extends TenantFreezes {
  budget: Budget | null;
  orgBudgets: ReadonlyMap<string, Budget>;
  coSign: { minutes: number; actions: number };
}

const NONE: PartnerGovernance = {
  partner: null,
  orgs: new Map(),
  budget: null,
  orgBudgets: new Map(),
  coSign: { ...CO_SIGN_DEFAULTS },
};

interface Mutable {
  partner: FreezeInfo | null;
  orgs: Map<string, FreezeInfo>;
  budget: Budget | null;
  orgBudgets: Map<string, Budget>;
  coSign: { minutes: number; actions: number };
}

const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

export class GovernorCache {
  private epoch = -1;
  /** Per partner, what bears on it at `epoch`: read on the first request of the partner after the epoch moved. */
  private readonly partners = new Map<string, Promise<PartnerGovernance>>();

  constructor(private readonly db: Db) {}

  /** What bears on the partner at `epoch` (undefined: read now, uncached). */
  async of(partnerId: string | null, epoch: number | undefined): Promise<PartnerGovernance> {
    if (!partnerId) return NONE;
    if (epoch === undefined) return this.load(partnerId);
    if (epoch !== this.epoch) {
      this.partners.clear();
      this.epoch = epoch;
    }
    let loading = this.partners.get(partnerId);
    if (!loading) {
      const fresh = this.load(partnerId);
      this.partners.set(partnerId, fresh);
      // A failed read is not kept: the next request tries again.
      fresh.catch(() => {
        if (this.partners.get(partnerId) === fresh) this.partners.delete(partnerId);
      });
      loading = fresh;
    }
    return loading;
  }

  /** Puts the freezes bearing on the principal on it (authenticate, explain). */
  async attach(p: Principal): Promise<void> {
    const g = await this.of(p.partnerId, p.epoch);
    p.freezes = { partner: g.partner, orgs: g.orgs };
  }

  private async load(partnerId: string): Promise<PartnerGovernance> {
    // Read in the system context so no caller's reach narrows what is kept for every caller of the partner.
    const rows = await asSystem('authenticate', () => governorRows(this.db, partnerId));
    if (rows.length === 0) return NONE;
    const entry: Mutable = {
      partner: null,
      orgs: new Map(),
      budget: null,
      orgBudgets: new Map(),
      coSign: { ...CO_SIGN_DEFAULTS },
    };
    for (const r of rows) {
      const freeze = r.freeze ? (json(r.freeze) as FreezeInfo) : null;
      const settings = governorSettingsSchema.safeParse(json(r.governor) ?? {});
      const g = settings.success ? settings.data : {};
      if (r.org_id) {
        if (freeze) entry.orgs.set(r.org_id, freeze);
        if (g.budget) entry.orgBudgets.set(r.org_id, g.budget);
      } else {
        entry.partner = freeze;
        entry.budget = g.budget ?? null;
        entry.coSign = {
          minutes: g.coSign?.minutes ?? CO_SIGN_DEFAULTS.minutes,
          actions: g.coSign?.actions ?? CO_SIGN_DEFAULTS.actions,
        };
      }
    }
    return entry;
  }
}
