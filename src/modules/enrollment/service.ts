// Enrollment keys and the agent side: enrolment places a device in the key's site;
// maxUsage holds under concurrent enrolments because the use is counted by one conditional UPDATE.
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { personIdOf, type Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { accessibleOrg, ENROLLMENT_KEY, findGroup, findInScope, findSite } from '../tenants/index.js';
import { type Scope, scopeOf, siteRestriction } from '../../access/scope.js';
import {
  countKeyUse,
  deleteKeyRow,
  deviceIdByAgentToken,
  insertDevice,
  insertKey,
  joinKeyGroup,
  keyByHash,
  listKeyRows,
  partnerOfOrg,
  replaceInventory,
  siteOfOrg,
  type KeyRow,
} from './repo.js';

export const DEFAULT_KEY_TTL_MS = 60 * 60 * 1000;
const actor = actorOf;

export const keyToJson = (k: KeyRow) => ({
  id: k.id,
  orgId: k.orgId,
  siteId: k.siteId,
  deviceGroupId: k.deviceGroupId,
  name: k.name,
  maxUsage: k.maxUsage,
  usageCount: k.usageCount,
  expiresAt: k.expiresAt.toISOString(),
  createdAt: k.createdAt.toISOString(),
});

export async function createKey(
  deps: Deps,
  p: Principal,
  input: {
    orgId: string;
    siteId?: string | null;
    deviceGroupId?: string | null;
    name: string;
    maxUsage?: number;
    expiresAt?: string;
  },
  meta: AuditRequestMeta,
) {
  const org = await accessibleOrg(deps.db, p, input.orgId);
  const now = deps.clock.now();
  if (input.deviceGroupId) {
    const group = await findGroup(deps.db, p, input.deviceGroupId).catch(() => null);
    if (!group || group.orgId !== org.id)
      throw new AppError('validation_failed', 'The device group is not of this organization.', {
        details: { fieldErrors: { deviceGroupId: ['Not a device group of this organization'] }, formErrors: [] },
      });
    // A group that belongs to a site only holds that site's devices, so the key must enrol into that site.
    if (group.siteId && group.siteId !== input.siteId)
      throw new AppError('validation_failed', 'The device group belongs to a site: the key must target that site.', {
        details: { fieldErrors: { deviceGroupId: ['Belongs to another site than the key'] }, formErrors: [] },
      });
  }
  if (input.siteId) {
    const site = await findSite(deps.db, p, input.siteId).catch(() => null);
    if (!site || site.orgId !== org.id)
      throw new AppError('validation_failed', 'The site is not of this organization.', {
        details: { fieldErrors: { siteId: ['Not a site of this organization'] }, formErrors: [] },
      });
  } else if (siteRestriction(p)) {
    throw new AppError('validation_failed', 'A site-restricted member must pin the key to one of its sites.', {
      details: { fieldErrors: { siteId: ['Required for site-restricted members'] }, formErrors: [] },
    });
  }
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : new Date(now.getTime() + DEFAULT_KEY_TTL_MS);
  if (expiresAt <= now)
    throw new AppError('validation_failed', 'The expiry is in the past.', {
      details: { fieldErrors: { expiresAt: ['Must be in the future'] }, formErrors: [] },
    });
  const key = `ghek_${randomToken(24)}`;
  return deps.db.transaction(async (tx) => {
    const row = await insertKey(tx, {
      orgId: org.id,
      siteId: input.siteId ?? null,
      deviceGroupId: input.deviceGroupId ?? null,
      name: input.name,
      keyHash: sha256(key),
      maxUsage: input.maxUsage ?? 1,
      expiresAt,
      createdBy: personIdOf(p),
    });
    await deps.audit.record(
      tx,
      {
        action: 'enrollment_key.create',
        actor: actor(p),
        partnerId: org.partnerId,
        orgId: org.id,
        resourceType: 'enrollment_key',
        resourceId: row.id,
        details: {
          name: input.name,
          maxUsage: row.maxUsage,
          expiresAt: expiresAt.toISOString(),
          siteId: row.siteId,
          deviceGroupId: row.deviceGroupId,
        },
      },
      meta,
    );
    return { ...keyToJson(row), key };
  });
}

export async function listKeys(
  db: Executor,
  p: Principal,
  scope: Scope,
  q: { orgId?: string; limit: number; cursor?: string },
) {
  if (q.orgId) await accessibleOrg(db, p, q.orgId);
  const after = decodeCursor(q.cursor, z.object({ c: z.string(), id: z.uuid() }));
  const rows = await listKeyRows(db, scope, { orgId: q.orgId, after, limit: q.limit });
  const page = pageOf(rows, q.limit, (k) => ({ c: k.createdAt.toISOString(), id: k.id }));
  return { data: page.data.map(keyToJson), nextCursor: page.nextCursor };
}

export async function findKey(db: Executor, p: Principal, id: string) {
  return (await findInScope(db, p, ENROLLMENT_KEY, id)).row;
}

export async function deleteKey(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const key = await findKey(tx, p, id);
    await deleteKeyRow(tx, id);
    await deps.audit.record(
      tx,
      {
        action: 'enrollment_key.delete',
        actor: actor(p),
        partnerId: p.partnerId,
        orgId: key.orgId,
        resourceType: 'enrollment_key',
        resourceId: id,
        details: { name: key.name },
      },
      meta,
    );
  });
}

/** Public: an agent trades a key for a device and an agent token. */
export async function enroll(
  deps: Deps,
  input: {
    enrollmentKey: string;
    hostname: string;
    osType: string;
    osVersion?: string;
    agentVersion?: string;
    siteId?: string;
  },
  meta: AuditRequestMeta,
) {
  const now = deps.clock.now();
  const hash = sha256(input.enrollmentKey);
  const agentToken = `ghat_${randomToken(32)}`;
  return deps.db.transaction(async (tx) => {
    // One statement decides: only a live key below its limit is counted, so N concurrent enrolments
    // against maxUsage M create exactly min(N, M) devices.
    const key = await countKeyUse(tx, hash, now);
    if (!key) {
      const known = await keyByHash(tx, hash);
      if (!known) throw new AppError('enrollment_key_invalid');
      if (known.expiresAt <= now) throw new AppError('enrollment_key_expired');
      throw new AppError('enrollment_key_exhausted');
    }
    let siteId = key.siteId;
    if (!siteId && input.siteId) {
      const site = await siteOfOrg(tx, input.siteId, key.orgId);
      if (!site) throw new AppError('site_required', 'The site named is not of the key\u2019s organization.');
      siteId = site;
    }
    if (!siteId) throw new AppError('site_required');
    const device = await insertDevice(tx, {
      orgId: key.orgId,
      siteId,
      enrollmentKeyId: key.id,
      hostname: input.hostname,
      osType: input.osType,
      osVersion: input.osVersion ?? null,
      agentVersion: input.agentVersion ?? null,
      agentTokenHash: sha256(agentToken),
      enrolledAt: now,
      lastSeenAt: now,
    });
    const deviceGroupId = await joinKeyGroup(tx, key, device.id, siteId);
    const partnerId = await partnerOfOrg(tx, key.orgId);
    await deps.audit.record(
      tx,
      {
        action: 'agent.enroll',
        partnerId,
        orgId: key.orgId,
        resourceType: 'device',
        resourceId: device.id,
        details: {
          hostname: input.hostname,
          enrollmentKeyId: key.id,
          siteId,
          deviceGroupId,
          usage: `${key.usageCount}/${key.maxUsage}`,
        },
      },
      meta,
    );
    return { deviceId: device.id, agentToken, orgId: key.orgId, siteId };
  });
}

/** The agent's report replaces the device's previous inventory and patch state. */
export async function reportInventory(
  deps: Deps,
  agentToken: string | null,
  body: { hardware: Record<string, unknown>; software: unknown[]; patches: unknown[] },
) {
  if (!agentToken) throw new AppError('invalid_agent_token');
  const now = deps.clock.now();
  const deviceId = await deviceIdByAgentToken(deps.db, sha256(agentToken));
  if (!deviceId) throw new AppError('invalid_agent_token');
  await deps.db.transaction(async (tx) => replaceInventory(tx, deviceId, body, now));
  return { success: true as const, deviceId, software: body.software.length, patches: body.patches.length };
}
