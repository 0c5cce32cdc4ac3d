// The request context: the principal (src/access/principal.ts) and its Scope (src/access/scope.ts) on the request,
// and the request's metadata.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../access/principal.js';
import { type Scope, scopeOf } from '../access/scope.js';

export type { ActiveGrant, Principal, PrincipalUser, ServiceAccountActor } from '../access/principal.js';

export interface RequestMeta {
  ip: string;
  userAgent: string | null;
  requestId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: Principal | null;
    /** The caller's Scope, resolved once (attachScope): what services hand to the predicates of src/db/tenant-filter.ts. */
    scope: Scope | null;
    /** The catalogue code of the error answered, for the request's log line and the error metric; null on success. */
    errorCode: string | null;
  }
}

/** The acting person's id for columns that reference users (created_by): null when a service account acts. */
export const personIdOf = (p: Principal): string | null => (p.actorType === 'user' ? p.userId : null);

/**
 * Puts the principal's Scope on the request (authenticate calls this once the principal is known). It is resolved on
 * first read, not up front: resolving decides organisation access for each organisation that sets policies on partner
 * members, and a break-glass request notes (and is alerted for) each organisation it passes.
 */
export function attachScope(req: FastifyRequest, p: Principal): void {
  Object.defineProperty(req, 'scope', { get: () => scopeOf(p), enumerable: true, configurable: true });
}

/** req.scope is null until authenticate has run (public routes never have one). */
export function installScope(app: FastifyInstance): void {
  app.decorateRequest('scope', null);
}
