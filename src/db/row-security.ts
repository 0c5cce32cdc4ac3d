// Row-level security, the second wall: every statement runs as the role `gatehouse_app`, which owns no
// table, with session settings that the policies of migration 0020 read. The settings come from the context of the
// code that issues the statement (AsyncLocalStorage), so no repository can forget them:
//   - inside a request, the caller's Scope (set once by the authentication guard), or one of SYSTEM_CONTEXTS, or,
//     with neither, nothing: no tenant row is visible;
//   - outside any request (start-up, background workers, the CLI), the system context `process`.
// A connection carries its settings until they change: the statement that finds its connection set for another
// context sets it first (one round trip, only when the context differs from the connection's last one).
import { AsyncLocalStorage } from 'node:async_hooks';
import { sql } from 'drizzle-orm';
import type { Executor } from './connect.js';

/**
 * The named system contexts: code that must act before a tenant is known, or across tenants, and what it is for.
 * Everything else runs as its caller's Scope. This list is the only place a system context is named.
 */
export const SYSTEM_CONTEXTS = {
  process: 'work that serves no caller: start-up, background workers (webhook and mail delivery, pruning), the CLI',
  authenticate: 'reading the session, API key or SCIM token that identifies the caller, before its Scope is known',
  login: 'password, passkey and MFA sign-in: the account and its memberships are found by e-mail or credential',
  refresh: 'refresh-token rotation: the session is found by its token',
  'sign-up': 'self-service registration, invitation preview and acceptance, password reset',
  sso: 'single sign-on: the provider is found by organisation or id, the identity by issuer and subject',
  enrolment: "an agent enrolling with an organisation's enrolment key",
  'oauth-token': 'the client-credentials grant: the service account is found by its client id',
  setup: 'the first-run setup, before any partner exists',
  'session-report': 'a browser reporting a session it did not start (the token is the only identity)',
  jwks: 'the public signing keys',
  'account-wide':
    "an account-wide change (status, name, password or MFA reset): the account's memberships in every tenant are counted (the change is refused when any lies outside the caller's) and its sessions in every tenant end",
  agent: 'an enrolled agent reporting for its own device, found by its device token',
  'audit-chain':
    "the audit writer appends to a hash chain: it reads the chain's tail and the webhooks it fans out to, whoever the caller",
  'switch-context':
    "a person moves their session to another of their own memberships: the target membership, its role and its tenant's policies are read there",
  'member-count':
    "counting the holders of each role on a page of roles, in the statement's own tenant: the row policy would run once per membership (thousands in a large partner) and only the counts leave the database",
  invitations:
    "a person lists and answers the memberships offered to their own account: the offering tenant's and role's names are read there, and the acceptance or refusal written there",
  'domain-proof':
    'whether, and by which tenant, an e-mail domain is proven (a domain is proven by one tenant at most); pending claims stay private',
  metrics:
    'the operator gauges (live sessions, mail outbox, webhook backlog and lag): counted over every tenant, only the totals leave the database',
  'access-request':
    'a member asks for just-in-time access to an organisation it cannot reach yet: eligibility is checked, and the request, its automatic approval and their audit records are written there',
} as const;
export type SystemContextName = keyof typeof SYSTEM_CONTEXTS;

/** The tenant a statement acts for: the caller's partner, the organisations it reaches, and the acting person. */
export interface RowReach {
  partnerId: string | null;
  /**
   * 'all': every organisation of the partner; `except`: every one but those (organisations created later included);
   * otherwise the organisation ids the caller reaches.
   */
  orgIds: 'all' | readonly string[] | { except: readonly string[] };
  /** The acting person (their own sessions and memberships, in any tenant); null for a service account. */
  userId: string | null;
}

export type RowContext =
  | { kind: 'system'; name: SystemContextName }
  | { kind: 'tenant'; reach: RowReach }
  /** A request with neither a caller nor a named flow: no tenant row is visible. */
  | { kind: 'none' };

/**
 * What a request's statements run as, decided late: `reach()` is read when a statement runs, so the guard that
 * authenticates the caller only has to put the principal on the request.
 */
export interface RowHolder {
  /** A named flow that acts before a tenant is known (a public route); wins over the caller's reach. */
  system: SystemContextName | null;
  /** The caller's reach once known; null before authentication. */
  reach: () => RowReach | null;
}

const als = new AsyncLocalStorage<RowHolder>();
const PROCESS: RowContext = { kind: 'system', name: 'process' };
const NONE: RowContext = { kind: 'none' };

/** Runs `fn` (and everything it starts) with this request holder. */
export const runWithRowHolder = <T>(holder: RowHolder, fn: () => T): T => als.run(holder, fn);

/**
 * Runs `fn` in a named system context, whatever the surrounding request is. Its result is awaited inside: a drizzle
 * query is lazy (it runs when awaited), and awaited outside it would run in the surrounding context.
 */
export const asSystem = <T>(name: SystemContextName, fn: () => PromiseLike<T> | T): Promise<T> =>
  als.run({ system: name, reach: () => null }, async () => await fn());

/** Runs `fn` with this tenant reach (tests, and code acting for a tenant outside a request); awaited inside, as above. */
export const asReach = <T>(reach: RowReach, fn: () => PromiseLike<T> | T): Promise<T> =>
  als.run({ system: null, reach: () => reach }, async () => await fn());

/** The context the next statement runs in. */
export function currentRowContext(): RowContext {
  const h = als.getStore();
  if (!h) return PROCESS;
  if (h.system) return { kind: 'system', name: h.system };
  const reach = h.reach();
  return reach ? { kind: 'tenant', reach } : NONE;
}

/** The settings statement: the role, then the four settings the policies read. */
export const SET_CONTEXT_SQL =
  "select set_config('role', $1, false), set_config('gatehouse.ctx', $2, false), " +
  "set_config('gatehouse.partner_id', $3, false), set_config('gatehouse.org_ids', $4, false), " +
  "set_config('gatehouse.user_id', $5, false)";

export const APP_ROLE = 'gatehouse_app';

/** Values for SET_CONTEXT_SQL; `role` null keeps the login role (migrations, and row security switched off). */
export function contextValues(ctx: RowContext, role: string | null): string[] {
  const r = role ?? 'none';
  if (ctx.kind === 'system') return [r, `system:${ctx.name}`, '', '', ''];
  if (ctx.kind === 'none') return [r, 'none', '', '', ''];
  const s = ctx.reach;
  return [r, 'tenant', s.partnerId ?? '', orgIdsSetting(s.orgIds), s.userId ?? ''];
}

/** gatehouse.org_ids: '*' (all), '!' and the excluded ids (all but those), or the ids reached. */
function orgIdsSetting(o: RowReach['orgIds']): string {
  if (o === 'all') return '*';
  if ('except' in o) return o.except.length ? `!${o.except.join(',')}` : '*';
  return o.join(',');
}

/**
 * Keeps one connection's settings in step with the context of the statement about to run on it. `state` is the
 * connection's last values; the statement runs only when they differ.
 */
export async function ensureContext(
  conn: { rowContext?: string },
  run: (values: string[]) => Promise<unknown>,
  role: string | null,
  ctx: RowContext = currentRowContext(),
): Promise<void> {
  const values = contextValues(ctx, role);
  const key = values.join('\u0000');
  if (conn.rowContext === key) return;
  conn.rowContext = undefined; // a failure half-way leaves it unknown: the next statement sets it again
  await run(values);
  conn.rowContext = key;
}

/**
 * Runs `fn`'s statements on `ex` in a named system context. Outside a transaction that is asSystem; inside one, the
 * connection is already the transaction's, so the context is switched for the transaction (`set_config(..., true)`)
 * and switched back after `fn`, and reverts at its end anyway.
 */
export async function asSystemWithin<T>(ex: Executor, name: SystemContextName, fn: () => PromiseLike<T>): Promise<T> {
  if (!('rollback' in ex)) return asSystem(name, fn);
  const current = currentRowContext();
  // Already a system context (a sign-in, a worker): every row is visible; no switch, no round trip.
  if (current.kind === 'system') return fn();
  const outer = contextValues(current, null)[1]!;
  await ex.execute(sql`select set_config('gatehouse.ctx', ${`system:${name}`}, true)`);
  try {
    return await fn();
  } finally {
    await ex.execute(sql`select set_config('gatehouse.ctx', ${outer}, true)`);
  }
}
