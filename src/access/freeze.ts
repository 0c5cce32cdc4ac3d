// Freezes: a partner admin stops every destructive permission of the partner's staff and service accounts at once; an
// organisation's admin stops them for everyone acting in the organisation (the partner's staff and service accounts,
// and the organisation's own members and accounts). Only the partner's break-glass account passes, with a stated
// reason (audited). The rule is pure; the freezes in force ride on the principal (attached per request from
// FreezeCache, keyed by the authorisation epoch that every freeze change bumps).
import { isDestructive } from './catalog.js';
import { speaksForPartner, type FreezeInfo, type Principal } from './principal.js';
import { deny, pass, type AccessReason } from './reasons.js';

const describe = (f: FreezeInfo, where: string) =>
  `${where} frozen by ${f.byName} (${f.side === 'partner' ? 'the partner' : 'the organisation'}) since ${f.at}: ${f.reason}`;

const freezeJson = (f: FreezeInfo) => ({ side: f.side, reason: f.reason, byName: f.byName, at: f.at });

/**
 * The `freeze` step for `permissions` asked of the principal, in `orgId` (null: no organisation yet, or a partner
 * record); null when none of the permissions is destructive or no freeze bears on them (the step does not apply).
 */
export function freezeReason(p: Principal, permissions: readonly string[], orgId: string | null): AccessReason | null {
  const destructive = permissions.filter(isDestructive);
  if (destructive.length === 0) return null;
  const partnerFreeze = speaksForPartner(p) ? (p.freezes?.partner ?? null) : null;
  const org = orgId ?? (p.tenantKind === 'organization' ? p.orgId : null);
  const orgFreeze = org ? (p.freezes?.orgs.get(org) ?? null) : null;
  const freeze = partnerFreeze ?? orgFreeze;
  // No freeze in force: the step does not appear (as `relationship` does not where none is required).
  if (!freeze) return null;
  const where = partnerFreeze
    ? "The partner's destructive permissions are"
    : "The organisation's destructive permissions are";
  if (p.breakGlass === true && p.breakGlassReason) {
    // Noted for the audit record written once the answer is sent (the break-glass alerts).
    p.freezePassed?.add(partnerFreeze ? '*' : org!);
    return pass(
      'freeze',
      `${describe(freeze, where)}. The partner's break-glass account passes with a reason (audited).`,
      {
        breakGlass: true,
        freeze: freezeJson(freeze),
      },
    );
  }
  return deny('freeze', `${describe(freeze, where)}.`, { freeze: freezeJson(freeze) });
}
