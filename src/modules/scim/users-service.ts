// SCIM Users (RFC 7644 3.3-3.6) in the token's tenant. A resource is one account's membership here: created (a new
// account, invited by mail when the token says so, or an existing account linked), read, listed with a filter
// translated to SQL, replaced, patched and deleted, each in one transaction with its audit record.
import type { Tx } from '../../db/connect.js';
import type { ScimEmail } from './repo.js';
import type { Deps } from '../../deps.js';
import { AppError, notFound } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { createInviteToken, inviteUrl } from '../auth/index.js';
import { domainProvenBy } from '../domains/index.js';
import { lockAddress, mails } from '../identity/index.js';
import { auditTenant } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { findMember } from '../users/index.js';
import { readdressAccount } from './account-address.js';
import { applyPatch, assertIfMatch, assertResourceId, etag, paging, project } from './common.js';
import type { ScimCaller } from './context.js';
import { endMembership, syncMembership } from './membership.js';
import {
  accountByEmail,
  accountById,
  accountInUse,
  deleteAccount,
  deleteScimUser,
  findUserRow,
  groupsOfUsers,
  insertAccount,
  insertScimUser,
  lockTenant,
  pageOfUsers,
  tenantName,
  updateAccount,
  updateScimUser,
  userClash,
  type ScimUserRow,
} from './repo.js';
import { LIST_RESPONSE, scimUserInput, USER_SCHEMA, type PatchBody, type ScimUserInput } from './schemas.js';

type Row = ScimUserRow;

const location = (deps: Deps, id: string) => `${deps.config.publicUrl}/scim/v2/Users/${id}`;

export function userJson(deps: Deps, r: Row, groups: { id: string; displayName: string }[]) {
  const formatted = [r.givenName, r.familyName].filter(Boolean).join(' ');
  return {
    schemas: [USER_SCHEMA],
    id: r.id,
    ...(r.externalId !== null ? { externalId: r.externalId } : {}),
    userName: r.userName,
    ...(r.displayName !== null ? { displayName: r.displayName } : {}),
    name: {
      ...(r.givenName !== null ? { givenName: r.givenName } : {}),
      ...(r.familyName !== null ? { familyName: r.familyName } : {}),
      ...(formatted ? { formatted } : {}),
    },
    emails: r.emails,
    active: r.active,
    groups: groups.map((g) => ({
      value: g.id,
      display: g.displayName,
      $ref: `${deps.config.publicUrl}/scim/v2/Groups/${g.id}`,
    })),
    meta: {
      resourceType: 'User',
      created: r.createdAt.toISOString(),
      lastModified: r.updatedAt.toISOString(),
      location: location(deps, r.id),
      version: etag(r.version),
    },
  };
}
export type ScimUserJson = ReturnType<typeof userJson>;

async function groupsOf(db: Deps['db'] | Tx, ids: string[]) {
  const out = new Map<string, { id: string; displayName: string }[]>();
  if (!ids.length) return out;
  const rows = await groupsOfUsers(db, ids);
  for (const r of rows) out.set(r.userId, [...(out.get(r.userId) ?? []), { id: r.id, displayName: r.displayName }]);
  return out;
}

async function jsonOf(deps: Deps, db: Deps['db'] | Tx, r: Row) {
  return userJson(deps, r, (await groupsOf(db, [r.id])).get(r.id) ?? []);
}

async function findRow(db: Deps['db'] | Tx, t: Target, id: string): Promise<Row> {
  const row = await findUserRow(db, t, assertResourceId(id, 'user'));
  if (!row) throw notFound('user');
  return row;
}

export async function getUser(deps: Deps, caller: ScimCaller, id: string) {
  return jsonOf(deps, deps.db, await findRow(deps.db, caller.target, id));
}

export async function listUsers(
  deps: Deps,
  caller: ScimCaller,
  q: { filter?: string; startIndex?: number; count?: number; attributes?: string; excludedAttributes?: string },
) {
  const { startIndex, count, offset } = paging(q);
  const { total, rows } = await pageOfUsers(deps.db, caller.target, q.filter, count, offset);
  const groups = await groupsOf(
    deps.db,
    rows.map((r) => r.id),
  );
  return {
    schemas: [LIST_RESPONSE],
    totalResults: total,
    startIndex,
    itemsPerPage: rows.length,
    Resources: rows.map((r) => project(userJson(deps, r, groups.get(r.id) ?? []), q, USER_SCHEMA)),
  };
}

/** What a User body means here: e-mails normalised, the account's address and name chosen. */
function normalise(input: ScimUserInput) {
  const emails: ScimEmail[] = (input.emails ?? []).map((e) => ({
    value: e.value,
    ...(e.type ? { type: e.type.toLowerCase() } : {}),
    ...(e.primary !== undefined ? { primary: e.primary } : {}),
  }));
  const chosen = emails.find((e) => e.primary) ?? emails.find((e) => e.type === 'work') ?? emails[0];
  const address = chosen?.value ?? input.userName;
  if (!/^[^@\s]+@[^@\s]+$/.test(address)) {
    throw new AppError('validation_failed', 'The user needs an e-mail address (emails, or a userName that is one).', {
      details: { fieldErrors: { emails: ['An e-mail address is required'] }, formErrors: [] },
    });
  }
  const givenName = input.name?.givenName ?? null;
  const familyName = input.name?.familyName ?? null;
  const accountName =
    input.displayName || input.name?.formatted || [givenName, familyName].filter(Boolean).join(' ') || input.userName;
  return {
    fields: {
      userName: input.userName,
      externalId: input.externalId ?? null,
      displayName: input.displayName ?? null,
      givenName,
      familyName,
      emails,
      active: input.active ?? true,
    },
    address: address.toLowerCase(),
    accountName: accountName.slice(0, 255),
  };
}

async function assertUnique(tx: Tx, t: Target, f: { userName: string; externalId: string | null }, selfId?: string) {
  const clash = await userClash(tx, t, f, selfId);
  if (clash) {
    const which = clash.userName.toLowerCase() === f.userName.toLowerCase() ? 'userName' : 'externalId';
    throw new AppError('user_exists_in_scope', `A user with this ${which} is already provisioned here.`);
  }
}

async function tenantLabel(tx: Tx, t: Target) {
  return (await tenantName(tx, t)) ?? (t.orgId ? 'your organization' : 'your partner');
}

export async function createUser(deps: Deps, caller: ScimCaller, input: ScimUserInput, meta: AuditRequestMeta) {
  const t = caller.target;
  const { fields, address, accountName } = normalise(input);
  const now = deps.clock.now();
  const row = await deps.db.transaction(async (tx) => {
    await lockTenant(tx, t);
    await assertUnique(tx, t, fields);
    await lockAddress(tx, address);
    let account = await accountByEmail(tx, address);
    // An account already a member here by other means is not SCIM's to take over.
    if (account && (await findMember(tx, t, account.id)))
      throw new AppError('user_exists_in_scope', 'An account with this e-mail is already a member here.');
    const owns = !account;
    if (!account)
      account = await insertAccount(tx, {
        email: address,
        name: accountName,
        status: 'invited',
        // Nobody opened a link yet: the address counts as proven only in a domain this tenant proved.
        emailVerified: await domainProvenBy(tx, address, t),
        createdAt: now,
        updatedAt: now,
      });
    const created = await insertScimUser(tx, {
      ...fields,
      partnerId: t.partnerId,
      orgId: t.orgId,
      userId: account.id,
      ownsAccount: owns,
      defaultRoleId: caller.defaultRoleId,
      createdAt: now,
      updatedAt: now,
    });
    const sync = await syncMembership(deps, tx, caller, created);
    // A new account sets its password through the invitation (or signs in by SSO: sendInvitations false).
    let mailed: 'invitation' | 'offer' | null = null;
    if (owns && sync.roleId && account.status === 'invited' && caller.sendInvitations) {
      const token = await createInviteToken(
        tx,
        now,
        account.id,
        { scope: t.kind, partnerId: t.partnerId, orgId: t.orgId, roleId: sync.roleId },
        null,
        caller.actor.forPartner === true,
      );
      await deps.outbox.enqueue(
        tx,
        mails.invitation(address, {
          inviterName: caller.tokenName,
          tenantName: await tenantLabel(tx, t),
          url: inviteUrl(deps.config.appUrl, token),
        }),
      );
      mailed = 'invitation';
    } else if (sync.pending) mailed = 'offer';
    await deps.audit.record(
      tx,
      {
        action: 'scim.user.create',
        actor: caller.actor,
        ...auditTenant(t),
        resourceType: 'user',
        resourceId: account.id,
        details: {
          scimId: created.id,
          email: address,
          externalId: fields.externalId,
          roleId: sync.roleId,
          existingAccount: !owns,
          active: fields.active,
          mailed,
        },
      },
      meta,
    );
    return created;
  });
  deps.outbox.kick();
  return jsonOf(deps, deps.db, row);
}

/** Replace and PATCH end here: the resource's new attributes, the account kept in step when SCIM made it. */
async function writeUser(
  deps: Deps,
  caller: ScimCaller,
  id: string,
  ifMatch: string | string[] | undefined,
  meta: AuditRequestMeta,
  next: (current: Row, tx: Tx) => Promise<ScimUserInput>,
) {
  const t = caller.target;
  let mailed: string | null = null;
  const row = await deps.db.transaction(async (tx) => {
    await lockTenant(tx, t);
    const current = await findRow(tx, t, id);
    assertIfMatch(ifMatch, current.version);
    const { fields, address, accountName } = normalise(await next(current, tx));
    await assertUnique(tx, t, fields, current.id);
    if (current.ownsAccount) {
      const account = await accountById(tx, current.userId);
      if (account) mailed = await readdressAccount(deps, tx, t, account, address);
      await updateAccount(tx, current.userId, { name: accountName, updatedAt: deps.clock.now() });
    }
    const changed = (Object.keys(fields) as (keyof typeof fields)[]).filter(
      (k) => JSON.stringify(fields[k]) !== JSON.stringify(current[k]),
    );
    const updated = changed.length
      ? await updateScimUser(tx, current.id, { ...fields, version: current.version + 1, updatedAt: deps.clock.now() })
      : current;
    const sync = await syncMembership(deps, tx, caller, updated);
    if (changed.length) {
      const action = changed.includes('active')
        ? fields.active
          ? 'scim.user.activate'
          : 'scim.user.deactivate'
        : 'scim.user.update';
      await deps.audit.record(
        tx,
        {
          action,
          actor: caller.actor,
          ...auditTenant(t),
          resourceType: 'user',
          resourceId: current.userId,
          details: {
            scimId: current.id,
            changed: changed.sort(),
            roleId: sync.roleId,
            sessionsRevoked: sync.sessionsRevoked,
            ...(mailed ? { pendingEmail: mailed } : {}),
          },
        },
        meta,
      );
    }
    return updated;
  });
  if (mailed) deps.outbox.kick();
  return jsonOf(deps, deps.db, row);
}

export async function replaceUser(
  deps: Deps,
  caller: ScimCaller,
  id: string,
  input: ScimUserInput,
  ifMatch: string | string[] | undefined,
  meta: AuditRequestMeta,
) {
  return writeUser(deps, caller, id, ifMatch, meta, async (current) => {
    if (input.id !== undefined && input.id.toLowerCase() !== current.id)
      throw new AppError('attribute_immutable', 'id is assigned by the service provider and cannot change.');
    return input;
  });
}

export async function patchUser(
  deps: Deps,
  caller: ScimCaller,
  id: string,
  body: PatchBody,
  ifMatch: string | string[] | undefined,
  meta: AuditRequestMeta,
) {
  return writeUser(deps, caller, id, ifMatch, meta, async (current) => {
    const { groups: _g, meta: _m, ...resource } = userJson(deps, current, []);
    const parsed = scimUserInput.safeParse(applyPatch(resource, body));
    if (!parsed.success) {
      const fieldErrors: Record<string, string[]> = {};
      for (const issue of parsed.error.issues)
        (fieldErrors[issue.path.join('.') || '(resource)'] ??= []).push(issue.message);
      throw new AppError('validation_failed', 'The patched user is not valid.', {
        details: { fieldErrors, formErrors: [] },
      });
    }
    return parsed.data;
  });
}

/** Deletes the resource and the membership; an account SCIM made and that belongs nowhere else goes too. */
export async function deleteUser(
  deps: Deps,
  caller: ScimCaller,
  id: string,
  ifMatch: string | string[] | undefined,
  meta: AuditRequestMeta,
) {
  const t = caller.target;
  await deps.db.transaction(async (tx) => {
    await lockTenant(tx, t);
    const current = await findRow(tx, t, id);
    assertIfMatch(ifMatch, current.version);
    const revoked = await endMembership(deps, tx, t, current.userId);
    await deleteScimUser(tx, current.id);
    let accountDeleted = false;
    if (current.ownsAccount) {
      if (!(await accountInUse(tx, current.userId))) {
        await deleteAccount(tx, current.userId);
        accountDeleted = true;
      }
    }
    await deps.audit.record(
      tx,
      {
        action: 'scim.user.delete',
        actor: caller.actor,
        ...auditTenant(t),
        resourceType: 'user',
        resourceId: current.userId,
        details: { scimId: current.id, userName: current.userName, sessionsRevoked: revoked, accountDeleted },
      },
      meta,
    );
  });
}
