// Refused attempts on authenticated routes (403 forbidden, permission_ceiling, last_admin, ...) as `access.denied`
// records with result `denied`. The refusal is noted when the error passes (onError) and written once the answer
// has gone out (onResponse): the write never delays or changes the response, and a failed write is only logged.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { AppError, type ErrorCode } from '../../http/errors.js';
import { metaOf } from '../../http/meta.js';
import { mayAccessOrg } from '../../access/decision.js';
import { orgBelongsToPartner } from './repo.js';
import { actorOf } from './writer.js';

/** Refusals of an authenticated caller's authority; policy refusals of one's own account (sso_enforced, ...) are not. */
export const DENIED_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'forbidden',
  'tenant_context_required',
  'full_org_access_required',
  'mfa_required',
  'permission_ceiling',
  'account_outside_authority',
  'forbidden_self_action',
  'last_admin',
  'system_role_immutable',
  'service_account_not_allowed',
]);

/** A caller hammering a refused route cannot flood the partner's trail (and its chain lock): the rest is logged. */
export const DENIED_FLOOD_LIMIT = 30;
export const DENIED_FLOOD_WINDOW_MS = 60_000;

const RESOURCE_TYPES: Record<string, string> = {
  users: 'user',
  roles: 'role',
  providers: 'sso_provider',
  organizations: 'organization',
  sites: 'site',
  'device-groups': 'device_group',
  devices: 'device',
  'enrollment-keys': 'enrollment_key',
  passkeys: 'passkey',
  contacts: 'contact',
  'service-accounts': 'service_account',
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `/api/v1/users/:id/role` → user, the id; routes without an id name no resource. */
function resourceOf(route: string, params: unknown): { resourceType: string | null; resourceId: string | null } {
  const id = (params as Record<string, unknown> | undefined)?.id;
  const segments = route.split('/');
  const at = segments.indexOf(':id');
  if (at < 1 || typeof id !== 'string') return { resourceType: null, resourceId: null };
  const segment = segments[at - 1]!;
  return { resourceType: RESOURCE_TYPES[segment] ?? segment.slice(0, 64), resourceId: id.slice(0, 255) };
}

/** The organisation the refused request named (?orgId= or body orgId), when it is one the caller's partner owns. */
async function requestedOrg(deps: Deps, req: FastifyRequest): Promise<string | null> {
  const p = req.auth!;
  if (p.tenantKind === 'organization') return p.orgId;
  const named =
    (req.query as Record<string, unknown> | undefined)?.orgId ??
    (req.body as Record<string, unknown> | undefined)?.orgId;
  if (typeof named !== 'string' || !UUID.test(named) || !p.partnerId || !mayAccessOrg(p, named)) return null;
  return (await orgBelongsToPartner(deps.db, p.partnerId, named)) ? named : null;
}

async function recordDenied(deps: Deps, req: FastifyRequest, error: AppError): Promise<void> {
  const p = req.auth!;
  const route = req.routeOptions.url ?? req.url.split('?')[0]!;
  const flood = await deps.store.hit(
    `audit-denied:${p.userId}`,
    DENIED_FLOOD_LIMIT,
    DENIED_FLOOD_WINDOW_MS,
    deps.clock.now().getTime(),
  );
  if (!flood.allowed) {
    req.log.warn(
      { userId: p.userId, code: error.code, method: req.method, route },
      'denied attempt not audited: too many from this user',
    );
    return;
  }
  const orgId = await requestedOrg(deps, req);
  await deps.db.transaction((tx) =>
    deps.audit.record(
      tx,
      {
        action: 'access.denied',
        result: 'denied',
        actor: actorOf(p),
        partnerId: p.partnerId,
        orgId,
        ...resourceOf(route, req.params),
        details: { method: req.method, route, errorCode: error.code },
      },
      metaOf(req),
    ),
  );
}

/** Install on the /api/v1 instance before its routes are registered. */
export function installDeniedAudit(app: FastifyInstance, deps: Deps): void {
  const refused = new WeakMap<FastifyRequest, AppError>();
  app.addHook('onError', async (req, _reply, error) => {
    if (error instanceof AppError && error.status === 403 && DENIED_CODES.has(error.code) && req.auth)
      refused.set(req, error);
  });
  // A callback hook: every request passes it, and only a refused one has work (no promise for the others).
  app.addHook('onResponse', (req, _reply, done) => {
    const error = refused.get(req);
    if (!error) return done();
    refused.delete(req);
    recordDenied(deps, req, error)
      .catch((err: unknown) => req.log.error({ err, code: error.code }, 'could not audit a denied attempt'))
      .finally(done);
  });
}
