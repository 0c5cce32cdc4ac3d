// The scope guard: every authenticated request carries its caller's Scope (src/access/scope.ts) as req.scope, resolved
// once. It is resolved on first read, not up front: resolving decides organisation access for each organisation that
// sets policies on partner members, and a break-glass request notes (and is alerted for) each organisation it passes.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../access/principal.js';
import { scopeOf } from '../access/scope.js';

/** Puts the principal's Scope on the request (authenticate calls this once the principal is known). */
export function attachScope(req: FastifyRequest, p: Principal): void {
  Object.defineProperty(req, 'scope', { get: () => scopeOf(p), enumerable: true, configurable: true });
}

/** req.scope is null until authenticate has run (public routes never have one). */
export function installScope(app: FastifyInstance): void {
  app.decorateRequest('scope', null);
}
