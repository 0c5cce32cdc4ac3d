// Step-up: the routes that hand out access need a password or second-factor proof made in the
// acting session within STEP_UP_MAX_AGE. One guard, one list; app.ts refuses to start if they disagree.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/connect.js';
import type { Clock } from '../platform/clock.js';
import { stepUpFactorsRow } from '../access/repo.js';
import { hasPermission, loadRoleChain } from '../access/resolver.js';
import type { Principal } from './context.js';
import { AppError } from './errors.js';
import { principalOf } from './guards.js';

/**
 * Every risky route, as registered (prefix included). `when` names the condition under which a route is risky;
 * routes without one always are. The step-up test walks this list.
 */
export const STEP_UP_ROUTES = [
  { method: 'POST', url: '/api/v1/roles' },
  { method: 'PATCH', url: '/api/v1/roles/:id' },
  { method: 'DELETE', url: '/api/v1/roles/:id' },
  { method: 'POST', url: '/api/v1/roles/:id/clone' },
  { method: 'POST', url: '/api/v1/users/:id/role' },
  { method: 'POST', url: '/api/v1/users/invite', when: 'the invited role is an admin role' },
  { method: 'POST', url: '/api/v1/users/:id/mfa/reset' },
  { method: 'PATCH', url: '/api/v1/users/:id', when: 'the body changes the e-mail address' },
  { method: 'PATCH', url: '/api/v1/users/me', when: 'the body changes the e-mail address' },
  { method: 'POST', url: '/api/v1/sso/providers' },
  { method: 'PATCH', url: '/api/v1/sso/providers/:id' },
  { method: 'DELETE', url: '/api/v1/sso/providers/:id' },
  { method: 'POST', url: '/api/v1/sso/providers/:id/status' },
  { method: 'POST', url: '/api/v1/enrollment-keys' },
  { method: 'PATCH', url: '/api/v1/orgs/organizations/:id', when: 'the body changes settings' },
  { method: 'PATCH', url: '/api/v1/orgs/partners/me', when: 'the body changes settings' },
  { method: 'POST', url: '/api/v1/service-accounts/:id/keys' },
  { method: 'PATCH', url: '/api/v1/service-accounts/:id', when: 'the body changes the role' },
  { method: 'POST', url: '/api/v1/webhooks' },
  { method: 'PATCH', url: '/api/v1/webhooks/:id' },
  { method: 'DELETE', url: '/api/v1/webhooks/:id' },
  { method: 'POST', url: '/api/v1/scim-tokens' },
  { method: 'POST', url: '/api/v1/domains/:id/verify' },
  { method: 'DELETE', url: '/api/v1/domains/:id' },
  { method: 'POST', url: '/api/v1/relationships/:id/approve' },
  { method: 'POST', url: '/api/v1/relationships/:id/decline' },
  { method: 'DELETE', url: '/api/v1/orgs/partners/me/freeze' },
  { method: 'DELETE', url: '/api/v1/orgs/organizations/:id/freeze' },
  { method: 'POST', url: '/api/v1/governor/co-signs/:id/approve' },
] as const satisfies readonly { method: string; url: string; when?: string }[];

export type StepUpMethod = 'password' | 'totp' | 'sms' | 'passkey' | 'reauthenticate';

export interface StepUpDeps {
  db: Db;
  clock: Clock;
  config: { stepUpMaxAge: number; enable2fa: boolean };
}

const STEP_UP_GUARD = Symbol.for('gatehouse.requireStepUp');

/** Whether a route's hooks carry the step-up guard (app.ts checks the list against the routes). */
export function carriesStepUp(hooks: unknown): boolean {
  return [hooks]
    .flat()
    .some((h) => typeof h === 'function' && (h as unknown as Record<symbol, unknown>)[STEP_UP_GUARD] === true);
}

export const stepUpFresh = (deps: StepUpDeps, p: Principal) =>
  p.authTime !== null && deps.clock.now().getTime() - p.authTime.getTime() <= deps.config.stepUpMaxAge * 1000;

/**
 * The proofs this account can give for a step-up under its policy: passkeys only where phishing-resistant MFA
 * applies; a second factor (not the password) where the policy requires MFA and one is enrolled; otherwise
 * the password or any enrolled factor. An account with none of them signs in again.
 */
export async function stepUpMethods(deps: StepUpDeps, p: Principal): Promise<StepUpMethod[]> {
  const row = await stepUpFactorsRow(deps.db, p.userId);
  if (!row) return ['reauthenticate'];
  const allowed = p.security.allowedMfaMethods;
  const factors: StepUpMethod[] = [];
  if (deps.config.enable2fa) {
    if (row.has_totp && allowed.totp && !p.security.phishingResistantOnly) factors.push('totp');
    if (row.has_sms && allowed.sms && !p.security.phishingResistantOnly) factors.push('sms');
    if (row.has_passkey && allowed.passkey) factors.push('passkey');
  }
  let methods: StepUpMethod[];
  if (deps.config.enable2fa && p.security.phishingResistantOnly) methods = factors.filter((m) => m === 'passkey');
  else if (deps.config.enable2fa && p.security.requireMfa && factors.length) methods = factors;
  else methods = [...(row.has_password ? (['password'] as const) : []), ...factors];
  return methods.length ? methods : ['reauthenticate'];
}

export interface StepUpOptions {
  /** The route is risky only when this holds (read after validation: body, params and query are typed). */
  when?: (req: FastifyRequest) => boolean | Promise<boolean>;
}

/** 403 step_up_required with the accepted `methods` unless the session proved itself within STEP_UP_MAX_AGE. */
export function requireStepUp(deps: StepUpDeps, opts: StepUpOptions = {}) {
  const guard = async function requireStepUp(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const p = principalOf(req);
    if (stepUpFresh(deps, p)) return;
    if (opts.when && !(await opts.when(req))) return;
    // A key proves no presence: a service account cannot take a risky action (issue keys, change roles, ...).
    if (p.actorType === 'service_account')
      throw new AppError(
        'service_account_not_allowed',
        'This action needs a person’s recent proof of presence (step-up): a service account cannot take it.',
      );
    throw new AppError('step_up_required', undefined, {
      methods: await stepUpMethods(deps, p),
      maxAgeSeconds: deps.config.stepUpMaxAge,
    });
  };
  return Object.assign(guard, { [STEP_UP_GUARD]: true });
}

/**
 * An admin role, for step-up on invitations: its effective permissions (own and inherited) let the holder hand
 * out or govern access: manage users or roles (users:write, users:delete, users:invite) or change security
 * and SSO settings (settings:write). `*:*` holds all of them.
 */
export const ADMIN_PERMISSIONS = ['users:write', 'users:delete', 'users:invite', 'settings:write'] as const;

export async function isAdminRole(db: Db, roleId: string): Promise<boolean> {
  const role = await loadRoleChain(db, roleId);
  return role !== null && ADMIN_PERMISSIONS.some((perm) => hasPermission(role.permissions, perm));
}

/** Called once the routes are registered: every guarded route is listed and every listed route is guarded. */
export function assertStepUpRoutes(registered: readonly { method: string; url: string; stepUp?: boolean }[]): void {
  const key = (r: { method: string; url: string }) => `${r.method} ${r.url}`;
  const guarded = new Set(registered.filter((r) => r.stepUp).map(key));
  const listed = new Set(STEP_UP_ROUTES.map(key));
  const unlisted = [...guarded].filter((k) => !listed.has(k));
  const unguarded = [...listed].filter((k) => !guarded.has(k));
  if (unlisted.length || unguarded.length) {
    throw new Error(
      `Step-up routes disagree with STEP_UP_ROUTES: unlisted ${unlisted.join(', ') || '-'}; unguarded ${unguarded.join(', ') || '-'}`,
    );
  }
}
