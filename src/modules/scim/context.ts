// Who provisions: a SCIM bearer token, looked up by its hash on every request (a revoked token is refused on its next
// request on every instance). The tenant is the token's: its organisation, or the partner's own staff.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/connect.js';
import { asSystem } from '../../db/row-security.js';
import { customerControlReasons } from '../../access/decision.js';
import { AppError } from '../../http/errors.js';
import { refusalOf } from '../../http/refusal.js';
import { normaliseIp } from '../../platform/cidr.js';
import type { Clock } from '../../platform/clock.js';
import { sha256 } from '../../platform/crypto.js';
import type { AuditActor } from '../audit/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { liveTokenByHash, orgSettingsOf, touchToken } from './repo.js';
import { SCIM_TOKEN_SHAPE } from './tokens-service.js';

export interface ScimCaller {
  tokenId: string;
  tokenName: string;
  target: Target;
  defaultRoleId: string;
  sendInvitations: boolean;
  createdBy: string | null;
  actor: AuditActor;
}

declare module 'fastify' {
  interface FastifyRequest {
    scim: ScimCaller | null;
  }
}

export function scimCallerOf(req: FastifyRequest): ScimCaller {
  if (!req.scim) throw new AppError('unauthenticated');
  return req.scim;
}

/** The bearer must be a live SCIM token; any other credential (an access token, an API key) is 401 here. */
export function makeScimAuthenticate(deps: { db: Db; clock: Clock }) {
  return async function authenticateScim(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = req.headers.authorization;
    const m = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!m || !SCIM_TOKEN_SHAPE.test(m[1]!)) {
      reply.header('www-authenticate', 'Bearer realm="scim"');
      throw new AppError('unauthenticated', 'A SCIM bearer token is required.');
    }
    const token = m[1]!;
    const row = await asSystem('authenticate', () => liveTokenByHash(deps.db, sha256(token)));
    if (!row) {
      reply.header('www-authenticate', 'Bearer realm="scim", error="invalid_token"');
      throw new AppError('unauthenticated', 'The SCIM token is not valid or was revoked.');
    }
    // A token the partner made for an organisation speaks for the partner there: the organisation's controls
    // (mspAccess, its IP allow-list) hold it on every request, so it cannot provision an admin who lifts them.
    if (row.orgId && row.madeByPartner) {
      const settings = await asSystem('authenticate', () => orgSettingsOf(deps.db, row.orgId!));
      const ip = req.ip ? (normaliseIp(req.ip) ?? req.ip) : null;
      const refusal = refusalOf(customerControlReasons({ ip }, row.orgId, settings), 'SCIM token');
      if (refusal) throw refusal;
    }
    const now = deps.clock.now();
    // At most one write a minute per token, whichever instance gets there first.
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > 60_000) {
      await asSystem('authenticate', () => touchToken(deps.db, row.id, now));
    }
    req.rowReach = { partnerId: row.partnerId, orgIds: row.orgId ? [row.orgId] : 'all', userId: null };
    req.scim = {
      tokenId: row.id,
      tokenName: row.name,
      target: row.orgId
        ? { kind: 'organization', partnerId: row.partnerId, orgId: row.orgId }
        : { kind: 'partner', partnerId: row.partnerId, orgId: null },
      defaultRoleId: row.defaultRoleId,
      sendInvitations: row.sendInvitations,
      createdBy: row.createdBy,
      actor: {
        userId: null,
        email: null,
        type: 'scim_token',
        scimToken: { id: row.id, name: row.name },
        forPartner: row.madeByPartner,
      },
    };
  };
}
