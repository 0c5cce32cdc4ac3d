// The vocabulary of an access decision: its steps, a reason per step (allowed or not, in words), the decision they
// make, and where a record lives. The decision (decision.ts) and the rules it composes (relationships.ts) build on it.

export const ACCESS_STEPS = [
  'account',
  'membership',
  'role',
  'organization_access',
  'relationship',
  'site',
  'device_group',
  'mfa',
  'ip_allowlist',
  'msp_access',
  'freeze',
  'budget',
] as const;
export type AccessStep = (typeof ACCESS_STEPS)[number];

/** How an organisation is reached (the `organization_access` step). */
export const ORG_ACCESS_VIAS = [
  'organization_member',
  'standing_all',
  'standing_all_except',
  'standing_selected',
  'partner_wide',
  'grant',
  'access_group',
] as const;
export type OrgAccessVia = (typeof ORG_ACCESS_VIAS)[number];

export interface AccessReason {
  step: AccessStep;
  allowed: boolean;
  detail: string;
  /** `role`: the role of the chain that grants the permission (nearest first). */
  roleId?: string;
  roleName?: string;
  /** `organization_access`: how the organisation is reached. */
  via?: OrgAccessVia;
  /** `organization_access` via `grant` (and `msp_access` passed by a customer-approved grant): which just-in-time grant, until when. */
  grantId?: string;
  until?: string;
  /** `relationship`: the relationships with the organisation that let the caller in. */
  relationshipIds?: string[];
  /** `relationship` (and `organization_access` via `access_group`): the partner's access groups that let the caller in. */
  accessGroupIds?: string[];
  /** `ip_allowlist`, `msp_access`, `freeze`: passed only as the partner's break-glass account (every such use is audited). */
  breakGlass?: boolean;
  /** `freeze`: the freeze in force (who set it, from which side, why, since when). */
  freeze?: { side: 'partner' | 'organization'; reason: string; byName: string; at: string };
  /** `budget`: what unlocks an exceeded budget. */
  requires?: 'step_up' | 'co_sign';
  /** `budget`: the budget weighed, what is used of it and by whom it is set. */
  budget?: BudgetUse;
}

/** One dimension of a blast-radius budget as a decision weighed it. */
export interface BudgetUse {
  setBy: 'partner' | 'organization';
  dimension: 'organizations' | 'devices' | 'destructive';
  limit: number;
  used: number;
  windowMinutes: number;
}

export interface AccessDecision {
  allowed: boolean;
  /** The first step that denies, or null when allowed. */
  deniedBy: AccessStep | null;
  reasons: AccessReason[];
}

/** Where a record lives (the owner of a by-id resource). `siteId`/`groupIds` undefined: no such rule applies. */
export interface Owner {
  partnerId: string;
  orgId: string | null;
  siteId?: string | null;
  groupIds?: string[];
}
export type PartnerOwned = 'shared' | 'partner-only' | 'never';
export type Siteless = 'visible' | 'hidden';

export const pass = (step: AccessStep, detail: string, extra: Partial<AccessReason> = {}): AccessReason => ({
  step,
  allowed: true,
  detail,
  ...extra,
});
export const deny = (step: AccessStep, detail: string, extra: Partial<AccessReason> = {}): AccessReason => ({
  step,
  allowed: false,
  detail,
  ...extra,
});
