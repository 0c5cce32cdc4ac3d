// The caller's Scope (src/access/scope.ts) is resolved once per request: req.scope and scopeOf(principal) are the same
// object, and nothing is decided before it is read (a break-glass request is noted only for organisations it reaches).
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { effectiveSecurity } from '../../src/access/settings.js';
import type { Principal } from '../../src/access/principal.js';
import { scopeOf } from '../../src/access/scope.js';
import { attachScope } from '../../src/http/context.js';

const PARTNER = '11111111-1111-4111-8111-111111111111';
const SUSPENDED = '22222222-2222-4222-8222-222222222222';
const OPEN = '33333333-3333-4333-8333-333333333333';

function partnerMember(extra: Partial<Principal> = {}): Principal {
  return {
    actorType: 'user',
    userId: '44444444-4444-4444-8444-444444444444',
    email: 'member@example.test',
    sessionId: '55555555-5555-4555-8555-555555555555',
    serviceAccount: null,
    mfa: true,
    mfaEnabled: true,
    tenantKind: 'partner',
    partnerId: PARTNER,
    orgId: null,
    roleId: '66666666-6666-4666-8666-666666666666',
    roleName: 'Partner Admin',
    orgAccess: 'all',
    orgIds: [],
    siteIds: null,
    deviceGroupIds: null,
    permissions: new Set(['*:*']),
    security: effectiveSecurity(),
    mfaEnrollmentRequired: false,
    mfaStepUpWaived: false,
    authTime: null,
    orgPolicies: { [SUSPENDED]: { mspAccess: 'suspended' }, [OPEN]: { mspAccess: 'allowed' } },
    ...extra,
  };
}

describe('the Scope of a request', () => {
  it('is resolved once: every read answers the same object', () => {
    const p = partnerMember();
    const req = {} as FastifyRequest;
    attachScope(req, p);
    expect(req.scope).toBe(scopeOf(p));
    expect(req.scope).toBe(req.scope);
    expect(req.scope).toEqual({
      membership: { kind: 'partner', partnerId: PARTNER, orgId: null, roleId: p.roleId },
      partnerId: PARTNER,
      orgs: { kind: 'partner', partnerId: PARTNER, except: [SUSPENDED] },
      siteIds: null,
      deviceGroupIds: null,
    });
  });

  it('decides nothing until read: break-glass is noted only once the scope is used', () => {
    const p = partnerMember({ breakGlass: true, breakGlassReason: 'outage', breakGlassUsed: new Set() });
    const req = {} as FastifyRequest;
    attachScope(req, p);
    expect(p.breakGlassUsed?.size).toBe(0);
    expect(req.scope?.orgs).toEqual({ kind: 'partner', partnerId: PARTNER, except: [] });
    expect([...(p.breakGlassUsed ?? [])]).toEqual([SUSPENDED]);
  });

  it('an organisation member: its organisation, sites and device groups', () => {
    const org = '77777777-7777-4777-8777-777777777777';
    const s = scopeOf(
      partnerMember({
        tenantKind: 'organization',
        orgId: org,
        orgAccess: null,
        siteIds: ['s1'],
        deviceGroupIds: ['g1'],
        orgPolicies: {},
      }),
    );
    expect(s.membership).toMatchObject({ kind: 'organization', orgId: org });
    expect(s.orgs).toEqual({ kind: 'one', orgId: org });
    expect([s.siteIds, s.deviceGroupIds]).toEqual([['s1'], ['g1']]);
  });
});
