// The authentication hook of every protected route: reads the bearer credential, asks the access core for the caller
// (src/access/caller.ts), puts it on the request with its Scope, and applies the request-level gates: the own
// tenant's IP allow-list, break-glass arming, people-only routes and the Force-MFA hold.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { armBreakGlass } from '../access/break-glass.js';
import { type CallerDeps, principalForBearer } from '../access/caller.js';
import { allowedMethodList } from '../access/settings.js';
import type { GovernorCache } from '../access/governor-cache.js';
import type { BudgetMeter } from '../access/principal.js';
import { VerifiedTokenCache } from '../access/token-cache.js';
import { asSystem } from '../db/row-security.js';
import { AppError } from './errors.js';
import { enforceOwnIpAllowlist } from './ip-policy.js';
import { metaOf } from './meta.js';
import { isPeopleOnly } from './people-only.js';
import type { RateLimits } from './rate-limit.js';
import { attachScope } from './context.js';

export interface AuthenticateDeps extends CallerDeps {
  enrollUrl: string;
  /** API keys: the per-key limit, and this instance's key environment (the key authenticator's own deps). */
  limits: RateLimits;
  apiKeyEnvironment: string;
  /** What the governor weighs, per authorisation epoch: the freezes in force go on every principal (the freeze step). */
  governance: GovernorCache;
  /** Meters destructive actions: put on every principal, so the by-id rule and the evaluation API charge it alike. */
  governor: BudgetMeter;
}

export function bearerToken(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (!h) return null;
  const m = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(h.trim());
  return m ? m[1]! : null;
}

export interface AuthenticateOptions {
  /** Routes a user held by Force MFA may still call (own profile, logout, enrolment). */
  allowPendingMfaEnrollment?: boolean;
}

export function makeAuthenticate(deps: AuthenticateDeps) {
  // Signatures are checked once per token, not per request; liveness comes from the push-invalidated cache when warm.
  const verified = new VerifiedTokenCache();
  return (opts: AuthenticateOptions = {}) =>
    async function authenticate(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
      const token = bearerToken(req);
      if (!token) throw new AppError('unauthenticated');
      // The lookups that identify the caller run before its Scope exists: the system context `authenticate`.
      const principal = await asSystem('authenticate', () =>
        principalForBearer(deps, verified, token, metaOf(req), req.ip),
      );
      if (principal === 'token_invalid')
        throw new AppError('unauthenticated', 'The access token is invalid or has expired.');
      if (principal === 'session_ended') throw new AppError('unauthenticated', 'The session has ended; sign in again.');
      await deps.governance.attach(principal);
      principal.governor = deps.governor;
      req.auth = principal;
      attachScope(req, principal);
      // A token replayed from outside the tenant's IP allow-list is refused, on every request.
      if (principal.actorType === 'user') {
        await enforceOwnIpAllowlist(deps, principal, metaOf(req));
        armBreakGlass(principal, req.headers);
      }
      if (principal.actorType === 'service_account' && isPeopleOnly(req.routeOptions.url))
        throw new AppError('service_account_not_allowed');
      if (principal.mfaEnrollmentRequired && !opts.allowPendingMfaEnrollment) {
        throw new AppError('mfa_enrollment_required', undefined, {
          enrollUrl: deps.enrollUrl,
          allowedMethods: allowedMethodList(principal.security),
        });
      }
    };
}
