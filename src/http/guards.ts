// Guards after authenticate, in one fixed order so every route refuses the same way:
// tenant context → full org access → permission → step-up MFA.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { permissionReason } from '../access/decision.js';
import { freezeReason } from '../access/freeze.js';
import type { PermissionKey } from '../access/catalog.js';
import type { Scope } from '../access/scope.js';
import type { Principal } from './context.js';
import { AppError } from './errors.js';

type Guard = (req: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** The principal of an authenticated request (authenticate must run first). */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.auth) throw new AppError('unauthenticated');
  return req.auth;
}

/** The caller's Scope, put on the request by authenticate: what a route hands to a service that lists. */
export function scopeIn(req: FastifyRequest): Scope {
  if (!req.scope) throw new AppError('unauthenticated');
  return req.scope;
}

export const requireTenant = (): Guard =>
  async function requireTenant(req) {
    const p = principalOf(req);
    if (!p.tenantKind) throw new AppError('tenant_context_required');
  };

/** Partner users whose orgAccess is not `all` cannot administer users and roles. */
export function assertFullOrgAccess(p: Principal): void {
  if (!p.tenantKind) throw new AppError('tenant_context_required');
  if (p.tenantKind === 'partner' && p.orgAccess !== 'all') throw new AppError('full_org_access_required');
}
export const requireFullOrgAccess = (): Guard =>
  async function requireFullOrgAccess(req) {
    assertFullOrgAccess(principalOf(req));
  };

export const requirePermission = (...required: PermissionKey[]): Guard & { permissions: readonly PermissionKey[] } =>
  // `permissions` is read by the OpenAPI document (src/http/openapi.ts) to say what the route needs.
  Object.assign(
    async function requirePermission(req: FastifyRequest) {
      const p = principalOf(req);
      if (!p.tenantKind) throw new AppError('tenant_context_required');
      for (const perm of required) {
        const reason = permissionReason(p.permissions, perm);
        if (!reason.allowed) throw new AppError('forbidden', reason.detail);
      }
      // A freeze of the caller's partner (or of its own organisation) stops destructive permissions before anything
      // is read; an organisation's freeze on partner staff is met where the record's organisation is known (the scope).
      const frozen = freezeReason(p, required, null);
      if (frozen && !frozen.allowed) throw new AppError('frozen', frozen.detail, { freeze: frozen.freeze });
      // Where the organisation is reached through relationships, their roles must cover the same permissions.
      p.asked = [...(p.asked ?? []), ...required];
    },
    { permissions: required },
  );

/** Step-up: the acting session must itself have passed a second factor (unless ENABLE_2FA=false makes that impossible). */
export const requireMfa = (): Guard =>
  async function requireMfa(req) {
    const p = principalOf(req);
    if (!p.mfa && !p.mfaStepUpWaived) throw new AppError('mfa_required');
  };
