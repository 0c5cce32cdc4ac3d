// Self-service registration (only with ENABLE_REGISTRATION=true).
import { randomBytes } from 'node:crypto';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import { AppError } from '../../http/errors.js';
import type { AuditActor, AuditRequestMeta } from '../audit/index.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';
import { slugify } from '../../platform/slug.js';
import { assertStrongPassword, hashPassword, type IssuedSession, startSession } from '../identity/index.js';
import { emailTaken, insertActiveUser, insertPartner, insertPartnerAdmin, partnerSlugTaken } from './repo.js';

async function uniquePartnerSlug(tx: Executor, name: string): Promise<string> {
  const base = slugify(name);
  for (let i = 0; i < 5; i++) {
    const candidate = i === 0 ? base : `${base}-${randomBytes(3).toString('hex')}`;
    if (!(await partnerSlugTaken(tx, candidate))) return candidate;
  }
  return `${base}-${randomBytes(6).toString('hex')}`;
}

async function insertUser(tx: Executor, input: { email: string; name: string; passwordHash: string }, now: Date) {
  if (await emailTaken(tx, input.email)) throw new AppError('email_taken');
  return insertActiveUser(tx, input, now);
}

/**
 * A registration attempt counts against the limit per client address and per e-mail, once its input is valid: a
 * body refused by validation never reaches this, and a weak password is refused before it counts, so typos do not
 * lock a newcomer out.
 */
export async function countRegistrationAttempt(
  deps: Pick<Deps, 'limits'>,
  limit: 'register' | 'registerPartner',
  ip: string,
  input: { email: string; password: string; name?: string },
): Promise<void> {
  await assertStrongPassword(input.password, input);
  await deps.limits.enforce(limit, `ip:${ip}`);
  await deps.limits.enforce(limit, `email:${input.email.toLowerCase()}`);
}

export async function register(
  deps: Deps,
  input: { email: string; password: string; name: string },
  meta: AuditRequestMeta,
): Promise<IssuedSession> {
  await assertStrongPassword(input.password, input);
  const passwordHash = await hashPassword(input.password);
  const now = deps.clock.now();
  try {
    return await deps.db.transaction(async (tx) => {
      const user = await insertUser(tx, { ...input, passwordHash }, now);
      await deps.audit.record(
        tx,
        {
          action: 'user.register',
          actor: { userId: user.id, email: user.email },
          resourceType: 'user',
          resourceId: user.id,
        },
        meta,
      );
      return startSession(
        deps,
        tx,
        user,
        { scope: null, partnerId: null, orgId: null, roleId: null },
        { mfa: false, method: 'registration', meta },
      );
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('email_taken');
    throw err;
  }
}

export interface NewPartner {
  companyName: string;
  email: string;
  name: string;
  passwordHash: string;
}

/**
 * The first partner of a tenant and its administrator (partner membership, orgAccess all, system Partner Admin role),
 * audited in the caller's transaction. Shared by registration, the first-run setup link and `gatehouse setup`.
 */
export async function createPartnerWithAdmin(
  deps: Pick<Deps, 'clock' | 'audit'>,
  tx: Executor,
  input: NewPartner,
  opts: { via: 'registration' | 'setup' | 'cli'; meta: AuditRequestMeta | null; actor?: AuditActor },
) {
  const now = deps.clock.now();
  const partner = await insertPartner(tx, input.companyName, await uniquePartnerSlug(tx, input.companyName));
  const user = await insertUser(tx, { email: input.email, name: input.name, passwordHash: input.passwordHash }, now);
  await insertPartnerAdmin(tx, partner.id, user.id, now);
  await deps.audit.record(
    tx,
    {
      action: 'partner.create',
      actor: opts.actor ?? { userId: user.id, email: user.email },
      partnerId: partner.id,
      resourceType: 'partner',
      resourceId: partner.id,
      details: { via: opts.via, adminUserId: user.id },
    },
    opts.meta,
  );
  return { partner, user };
}

/** Maps a unique violation on the e-mail (a concurrent insert) to email_taken. */
export async function refusingDuplicateEmail<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('email_taken');
    throw err;
  }
}

export interface SetupSteps {
  /** Runs first inside the transaction (the setup link's checks); a throw rolls everything back. */
  before(tx: Executor): Promise<void>;
  /** Runs once the partner and its administrator exist, in the same transaction. */
  after(tx: Executor, created: { partner: { id: string; name: string; slug: string }; userId: string }): Promise<void>;
}

export async function registerPartner(
  deps: Deps,
  input: { companyName: string; email: string; password: string; name: string },
  meta: AuditRequestMeta,
  /** The first-run setup link's steps; without them, a self-service registration. */
  setup?: SetupSteps,
): Promise<{ issued: IssuedSession; partner: { id: string; name: string; slug: string } }> {
  await assertStrongPassword(input.password, input);
  const passwordHash = await hashPassword(input.password);
  return refusingDuplicateEmail(() =>
    deps.db.transaction(async (tx) => {
      await setup?.before(tx);
      const { partner, user } = await createPartnerWithAdmin(
        deps,
        tx,
        { ...input, passwordHash },
        { via: setup ? 'setup' : 'registration', meta },
      );
      const ctx = { scope: 'partner' as const, partnerId: partner.id, orgId: null, roleId: PARTNER_ADMIN_ROLE_ID };
      const issued = await startSession(deps, tx, user, ctx, {
        mfa: false,
        method: setup ? 'setup' : 'registration',
        meta,
      });
      const shown = { id: partner.id, name: partner.name, slug: partner.slug };
      await setup?.after(tx, { partner: shown, userId: user.id });
      return { issued, partner: shown };
    }),
  );
}
