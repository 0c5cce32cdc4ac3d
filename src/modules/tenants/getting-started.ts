// A new partner's first steps, each ticked from what the database holds (never from a flag the console sets): an
// organisation, a second member of staff, two-step verification required for staff, a staff SSO provider in use, a
// device that reported, an audit webhook. Read in one statement (repo.ts), under the caller's row reach.
import type { Executor } from '../../db/connect.js';
import { effectiveSecurity } from '../../access/settings.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { gettingStartedState } from './repo.js';

export const GETTING_STARTED_STEPS = [
  'organization',
  'technician',
  'require_mfa',
  'staff_sso',
  'first_device',
  'audit_webhook',
] as const;
export type GettingStartedStep = (typeof GETTING_STARTED_STEPS)[number];

/** What each step asks and where in the console it is done. */
const STEPS: Record<GettingStartedStep, { title: string; description: string; link: string }> = {
  organization: {
    title: 'Create your first customer organisation',
    description: 'Each customer is an organisation with its sites and device groups.',
    link: '/tenants',
  },
  technician: {
    title: 'Invite a technician',
    description: 'Invite a colleague to your staff, with the role they need.',
    link: '/users',
  },
  require_mfa: {
    title: 'Require two-step verification for your staff',
    description: 'Everyone on your staff enrols a second factor at their next sign-in.',
    link: '/security',
  },
  staff_sso: {
    title: 'Set up SSO for your staff',
    description: 'Your staff sign in with your own identity provider.',
    link: '/sso',
  },
  first_device: {
    title: 'Get a first device reporting',
    description: 'Create an enrollment key and run its install command on a device.',
    link: '/onboarding/enrollment-keys',
  },
  audit_webhook: {
    title: 'Add a webhook for your SIEM',
    description: 'A webhook delivers every audit event, signed, to your SIEM or ticketing system.',
    link: '/integrations/webhooks',
  },
};

/** The checklist of the caller's partner: only its own staff (the route asks settings:write and full access). */
export async function gettingStarted(db: Executor, p: Principal) {
  if (!p.partnerId) throw new AppError('tenant_context_required');
  if (p.tenantKind !== 'partner')
    throw new AppError('forbidden', "Only the partner's own staff see its getting-started checklist.");
  const row = await gettingStartedState(db, p.partnerId);
  if (!row) throw notFound('partner');
  const done: Record<GettingStartedStep, boolean> = {
    organization: row.organization,
    technician: row.technician,
    require_mfa: effectiveSecurity(row.settings).requireMfa,
    staff_sso: row.staff_sso,
    first_device: row.first_device,
    audit_webhook: row.audit_webhook,
  };
  const items = GETTING_STARTED_STEPS.map((id) => ({ id, ...STEPS[id], done: done[id] }));
  return { partnerName: row.name, complete: items.every((i) => i.done), items };
}
