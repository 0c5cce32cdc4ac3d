// Designating the partner's break-glass account: the account that passes IP allow-lists and, with a stated reason,
// organisations that suspended partner access. Choosing it is a Partner Admin's act (`*:*` in the partner; the route
// asks for a step-up), every change is audited and mailed to every Partner Admin, so no one arms it unnoticed.
import type { Tx } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../../access/audit.js';
import { accessMails } from '../../access/mails.js';
import { partnerAdmins } from '../../access/repo.js';
import { breakGlassUserOf } from '../../access/settings.js';
import { activePartnerMemberEmail } from './repo.js';

const invalid = (msg: string) =>
  new AppError('validation_failed', msg, {
    details: { fieldErrors: { 'settings.security.breakGlassUserId': [msg] }, formErrors: [] },
  });

/**
 * Checks and records a change of the break-glass account (undefined `next`: not asked for; null: cleared). Runs in the
 * settings update's transaction; the mails leave with it.
 */
export async function designateBreakGlass(
  deps: Deps,
  tx: Tx,
  p: Principal,
  currentSettings: unknown,
  next: string | null | undefined,
  meta: AuditRequestMeta,
): Promise<void> {
  if (next === undefined) return;
  const previous = breakGlassUserOf(currentSettings);
  if (next === previous) return;
  if (p.tenantKind !== 'partner' || !p.permissions.has('*:*'))
    throw new AppError('forbidden', 'Designating the break-glass account needs partner admin rights (*:*).');
  const partnerId = p.partnerId!;
  const designated = next ? await activePartnerMemberEmail(tx, partnerId, next) : null;
  if (next && !designated) throw invalid('Not an active member of the partner');
  const before = previous ? await activePartnerMemberEmail(tx, partnerId, previous) : null;
  await deps.audit.record(
    tx,
    {
      action: 'partner.break_glass.designate',
      actor: actorOf(p),
      partnerId,
      resourceType: 'partner',
      resourceId: partnerId,
      details: { from: previous, to: next },
    },
    meta,
  );
  const admins = await partnerAdmins(tx, partnerId);
  for (const email of admins.emails)
    await deps.outbox.enqueue(
      tx,
      accessMails.breakGlassDesignated(email, {
        partnerName: admins.partnerName,
        actor: p.email,
        designated,
        previous: before,
        url: `${deps.config.appUrl}/settings`,
      }),
    );
}
