// The request context: the principal (src/access/principal.ts) on the request, and the request's metadata.
import type { Principal } from '../access/principal.js';
import type { Scope } from '../access/scope.js';

export type { ActiveGrant, Principal, PrincipalUser, ServiceAccountActor } from '../access/principal.js';

export interface RequestMeta {
  ip: string;
  userAgent: string | null;
  requestId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: Principal | null;
    /** The caller's Scope, resolved once (src/http/scope.ts): what services hand to the tenant-scope predicates. */
    scope: Scope | null;
    /** The catalogue code of the error answered, for the request's log line and the error metric; null on success. */
    errorCode: string | null;
  }
}

/** The acting person's id for columns that reference users (created_by): null when a service account acts. */
export const personIdOf = (p: Principal): string | null => (p.actorType === 'user' ? p.userId : null);
