// Just-in-time grants seen past their end: recorded expired once, by whichever request (authenticate)
// or sweep (GET /access/grants, in the governance module) marks each one first.
import type { Executor } from '../db/connect.js';
import type { AuditRecorder } from './audit.js';
import { markGrantExpired } from './repo.js';

/**
 * Records a grant first seen past its end (`access.expire`, once: whichever request or sweep marks it). Called by
 * authenticate when a member's own grant has run out, and by GET /access/grants as a sweep of what it lists.
 */
export async function recordGrantExpiry(
  tx: Executor,
  audit: AuditRecorder,
  grantId: string,
  at: Date,
  observed: 'request' | 'sweep',
): Promise<boolean> {
  const m = await markGrantExpired(tx, grantId, at);
  if (!m) return false;
  await audit.record(
    tx,
    {
      action: 'access.expire',
      actor: null,
      partnerId: m.partner_id,
      orgId: m.org_id,
      resourceType: 'access_grant',
      resourceId: grantId,
      details: {
        requestId: m.request_id,
        userId: m.user_id,
        siteId: m.site_id,
        expiresAt: new Date(m.expires_at).toISOString(),
        reason: m.reason,
        ticketRef: m.ticket_ref,
        observed,
      },
    },
    null,
  );
  return true;
}
