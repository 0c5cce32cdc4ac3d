// The authorization API's evaluations: many (subject, resource, action) questions answered in one round trip by the
// decision every request passes (decideFor, as explain and who-can). The records' owners are read in one statement per
// kind, the subjects once per organisation the records lie in; the decision itself is pure. A caller gets answers
// only about its own partner: another partner's subject or record answers exactly as one that does not exist.
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import {
  decisionOf,
  deny,
  type AccessDecision,
  type Owner,
  type PartnerOwned,
  type Siteless,
} from '../../access/decision.js';
import { DEVICE, DEVICE_GROUP, ORGANIZATION, SCRIPT, SITE, type ByIdResource } from '../tenants/index.js';
import { decideFor } from './explain-service.js';
import { attachFreezes, weighBudgets, type Decided } from './authzen-budget.js';
import { stopOnOf, type Semantic } from './authzen-batch.js';
import { serviceAccountSubjectsOf, userSubjectsOf, type Subject } from './subjects.js';
import { decisionFacts, type DecisionFacts } from './authzen-cache.js';
import {
  AUTHZEN_RESOURCE_TYPES,
  decisionEpoch,
  homeOrgRows,
  ownerRows,
  serviceAccountSubjectRows,
  userSubjectRows,
  type AccountSubjectRow,
  type AuthzenResourceType,
  type SubjectFactsRow,
  type OwnerRow,
  type RecordType,
} from './repo.js';
import { PERMISSION_KEYS, SUBJECT_TYPES, type SubjectType } from './authzen-schemas.js';

/** One question, validated: who, which record, which permission. */
export interface Question {
  subject: { type: SubjectType; id: string; ip: string | null };
  resource: { type: AuthzenResourceType; id: string };
  permission: string;
  /** `context.dry_run`: the answer only, the budgets counted and never charged. */
  dryRun: boolean;
}

export interface Target {
  type: AuthzenResourceType;
  id: string;
  owner: Owner;
  partnerOwned: PartnerOwned;
  siteless: Siteless;
}

export interface DecisionJson {
  decision: boolean;
  context: {
    epoch: number;
    reasons: AccessDecision['reasons'];
    denied_by?: string;
    requires?: 'step_up' | 'co_sign';
    reason?: string;
    error?: { status: number; message: string };
  };
}

const KINDS: Record<RecordType, ByIdResource<unknown>> = {
  organization: ORGANIZATION,
  site: SITE,
  device_group: DEVICE_GROUP,
  device: DEVICE,
  script: SCRIPT,
} as Record<RecordType, ByIdResource<unknown>>;

export const NO_MEMBERSHIP = 'No membership or service account of the partner bearing on the record.';
const NOT_FOUND = 'No such record in the partner.';

// ---- Validation beyond the schema: the types and actions, with their own codes ----

export function subjectTypeOf(type: string): SubjectType {
  if (!(SUBJECT_TYPES as readonly string[]).includes(type)) throw new AppError('unknown_subject_type');
  return type as SubjectType;
}
export function resourceTypeOf(type: string): AuthzenResourceType {
  if (!(AUTHZEN_RESOURCE_TYPES as readonly string[]).includes(type)) throw new AppError('unknown_resource_type');
  return type as AuthzenResourceType;
}
export function permissionOf(name: string): string {
  if (!PERMISSION_KEYS.includes(name))
    throw new AppError('unknown_permission', `${name} is not a permission of the catalogue (resource:action).`);
  return name;
}

// ---- Records ----

/** The owner of a record as its by-id rule (src/modules/tenants/by-id.ts) builds it. */
export function targetOf(type: RecordType, row: OwnerRow): Target {
  const kind = KINDS[type];
  const owner: Owner = { partnerId: row.partner_id, orgId: row.org_id };
  if (type === 'site' || type === 'device_group' || type === 'device') owner.siteId = row.site_id;
  if (type === 'device_group' || type === 'device') owner.groupIds = row.group_ids ?? [];
  return { type, id: row.id, owner, partnerOwned: kind.partnerOwned, siteless: kind.siteless };
}

/** Whether the caller may ask about the record: its own partner, and, for an organisation's account, its organisation. */
function callerMayAsk(caller: Principal, t: Target): boolean {
  if (t.owner.partnerId !== caller.partnerId) return false;
  if (caller.tenantKind !== 'organization') return true;
  return t.owner.orgId === caller.orgId || (t.owner.orgId === null && t.partnerOwned === 'shared');
}

const keyOf = (r: { type: string; id: string }) => `${r.type}:${r.id}`;

/** What the caller's row reach is, for cache keys: facts read under one reach are not served to another. */
const reachOf = (caller: Principal) =>
  `${caller.partnerId}|${caller.tenantKind === 'organization' ? caller.orgId : '*'}`;

/** The records asked about, each kind in one statement (or none, when cached); absent: not one the caller may ask about. */
export async function loadTargets(
  deps: Deps,
  caller: Principal,
  refs: { type: AuthzenResourceType; id: string }[],
  epoch: number,
): Promise<Map<string, Target>> {
  const out = new Map<string, Target>();
  const partnerId = caller.partnerId;
  if (!partnerId) throw new AppError('tenant_context_required');
  const facts = decisionFacts(deps);
  facts.at(epoch);
  const reach = reachOf(caller);
  const keep = (type: RecordType, row: OwnerRow) => {
    const t = targetOf(type, row);
    if (callerMayAsk(caller, t)) out.set(keyOf(t), t);
  };
  const byType = new Map<RecordType, Set<string>>();
  for (const r of refs) {
    if (r.type === 'partner') {
      const t: Target = {
        type: 'partner',
        id: r.id,
        owner: { partnerId: r.id, orgId: null },
        partnerOwned: 'partner-only',
        siteless: 'visible',
      };
      if (r.id === partnerId && callerMayAsk(caller, t)) out.set(keyOf(r), t);
      continue;
    }
    const hit = facts.get<OwnerRow>(epoch, `o|${reach}|${r.type}|${r.id}`);
    if (hit) {
      keep(r.type, hit);
      continue;
    }
    let ids = byType.get(r.type);
    if (!ids) byType.set(r.type, (ids = new Set()));
    ids.add(r.id);
  }
  for (const [type, ids] of byType) {
    for (const row of await ownerRows(deps.db, type, [...ids], partnerId)) {
      facts.set(epoch, `o|${reach}|${type}|${row.id}`, row);
      keep(type, row);
    }
  }
  return out;
}

// ---- Subjects ----

/** Subjects keyed by organisation (and address), each id's memberships bearing on records there. */
export class SubjectBook {
  private readonly loaded = new Map<string, Map<string, Subject[]>>();
  private readonly facts: DecisionFacts;
  private readonly reach: string;

  constructor(
    private readonly deps: Deps,
    caller: Principal,
    private readonly epoch: number,
  ) {
    this.facts = decisionFacts(deps);
    this.facts.at(epoch);
    this.reach = reachOf(caller);
  }

  private get partnerId() {
    return this.reach.split('|')[0]!;
  }

  private static slot = (orgId: string | null, ip: string | null) => `${orgId ?? '-'}|${ip ?? '-'}`;

  /** Loads, per organisation and address, every subject the questions name there: one statement per kind at most. */
  async load(questions: { subject: Question['subject']; orgId: string | null }[]): Promise<void> {
    const wanted = new Map<
      string,
      { orgId: string | null; ip: string | null; users: Set<string>; accounts: Set<string> }
    >();
    for (const q of questions) {
      const slot = SubjectBook.slot(q.orgId, q.subject.ip);
      if (this.loaded.has(slot)) continue;
      let w = wanted.get(slot);
      if (!w) wanted.set(slot, (w = { orgId: q.orgId, ip: q.subject.ip, users: new Set(), accounts: new Set() }));
      (q.subject.type === 'user' ? w.users : w.accounts).add(q.subject.id);
    }
    const now = this.deps.clock.now().getTime();
    for (const [slot, w] of wanted) {
      const found = new Map<string, Subject[]>();
      const userRows = await this.cached<SubjectFactsRow>('u', w.orgId, [...w.users], true, (ids) =>
        userSubjectRows(this.deps.db, ids, this.partnerId, w.orgId),
      );
      const users = await userSubjectsOf(userRows, this.deps.roleCache, this.deps.config.enable2fa, now, w.ip);
      for (const [id, s] of users) found.set(`user:${id}`, s);
      const accountRows = await this.cached<AccountSubjectRow>('s', w.orgId, [...w.accounts], false, (ids) =>
        serviceAccountSubjectRows(this.deps.db, ids, this.partnerId, w.orgId),
      );
      const accounts = await serviceAccountSubjectsOf(accountRows, this.deps.roleCache, now);
      for (const [id, s] of accounts) found.set(`service_account:${id}`, [s]);
      this.loaded.set(slot, found);
    }
  }

  /** The rows of `ids` (cached ones, the others in one statement); `keepAbsent`: an id without rows is kept too. */
  private async cached<R extends SubjectFactsRow | AccountSubjectRow>(
    kind: 'u' | 's',
    orgId: string | null,
    ids: string[],
    keepAbsent: boolean,
    read: (ids: string[]) => Promise<R[]>,
  ): Promise<R[]> {
    const key = (id: string) => `${kind}|${this.reach}|${orgId ?? '-'}|${id}`;
    const rows: R[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      const hit = this.facts.get<R[]>(this.epoch, key(id));
      if (hit) rows.push(...hit);
      else missing.push(id);
    }
    if (missing.length === 0) return rows;
    const fresh = await read(missing);
    const byId = new Map<string, R[]>();
    for (const row of fresh) {
      const id = 'user_id' in row ? row.user_id : row.account_id;
      byId.set(id, [...(byId.get(id) ?? []), row]);
    }
    for (const id of missing) {
      const mine = byId.get(id);
      if (mine || keepAbsent)
        this.facts.set(this.epoch, key(id), (mine ?? []) as SubjectFactsRow[] | AccountSubjectRow[]);
    }
    return [...rows, ...fresh];
  }

  get(subject: Question['subject'], orgId: string | null): Subject[] {
    return this.loaded.get(SubjectBook.slot(orgId, subject.ip))?.get(`${subject.type}:${subject.id}`) ?? [];
  }
}

// ---- Decisions ----

/** The decision of one subject on one record: the membership that allows (`by`), else the first (organisation first). */
export function decideSubject(subjects: Subject[], permission: string, t: Target): AccessDecision {
  return decideAs(subjects, permission, t).decision;
}

function decideAs(subjects: Subject[], permission: string, t: Target): Decided {
  if (subjects.length === 0) return { decision: decisionOf([deny('membership', NO_MEMBERSHIP)]) };
  let first: AccessDecision | null = null;
  for (const s of subjects) {
    const d = decideFor(s, permission, t);
    if (d.allowed) return { decision: d, by: s };
    first ??= d;
  }
  return { decision: first! };
}

/** The answer; over a budget, its context says what unlocks it (`requires`), as a route's 403 does. */
export function decisionJson(d: AccessDecision, epoch: number): DecisionJson {
  const requires = d.reasons.find((r) => r.step === 'budget' && !r.allowed)?.requires;
  const context: DecisionJson['context'] = { epoch, reasons: d.reasons };
  if (d.deniedBy) context.denied_by = d.deniedBy;
  if (requires) context.requires = requires;
  return { decision: d.allowed, context };
}

const notFoundJson = (epoch: number): DecisionJson => ({
  decision: false,
  context: { epoch, reasons: [], error: { status: 404, message: NOT_FOUND } },
});

/**
 * The organisations whose memberships bear on the record for the subject: the record's own; for a partner-wide record
 * in force in every organisation (a shared script), the partner level and each organisation the subject belongs to.
 */
function slotsOf(t: Target, homes: Map<string, string[]>, subject: Question['subject']): (string | null)[] {
  if (t.owner.orgId !== null || t.partnerOwned !== 'shared') return [t.owner.orgId];
  return [null, ...(homes.get(`${subject.type}:${subject.id}`) ?? [])];
}

/** The memberships bearing on each (subject, record) pair, read for all pairs at once (see SubjectBook). */
export async function subjectsFor(
  deps: Deps,
  caller: Principal,
  epoch: number,
  pairs: { subject: Question['subject']; target: Target }[],
): Promise<(subject: Question['subject'], t: Target) => Subject[]> {
  const partnerId = caller.partnerId!;
  const shared = (t: Target) => t.owner.orgId === null && t.partnerOwned === 'shared';
  const homes = await homeOrgsOf(
    deps,
    partnerId,
    pairs.filter((p) => shared(p.target)).map((p) => p.subject),
  );
  const book = new SubjectBook(deps, caller, epoch);
  await book.load(
    pairs.flatMap((p) => slotsOf(p.target, homes, p.subject).map((orgId) => ({ subject: p.subject, orgId }))),
  );
  return (subject, t) => slotsOf(t, homes, subject).flatMap((orgId) => book.get(subject, orgId));
}

/** Answers in order: the epoch first (a change after it moves it), the records, the subjects, then their budgets. */
export async function evaluateAll(
  deps: Deps,
  caller: Principal,
  questions: Question[],
  semantic: Semantic = 'execute_all',
): Promise<DecisionJson[]> {
  const epoch = await decisionEpoch(deps.db);
  const targets = await loadTargets(
    deps,
    caller,
    questions.map((q) => q.resource),
    epoch,
  );
  const found = questions.map((q) => targets.get(keyOf(q.resource)));
  const subjectsOf = await subjectsFor(
    deps,
    caller,
    epoch,
    questions.flatMap((q, i) => (found[i] ? [{ subject: q.subject, target: found[i]! }] : [])),
  );
  const subjects = questions.map((q, i) => (found[i] ? subjectsOf(q.subject, found[i]!) : []));
  await attachFreezes(deps, new Set(subjects.flat()));
  const decided = questions.map((q, i) => (found[i] ? decideAs(subjects[i]!, q.permission, found[i]!) : null));
  await weighBudgets(
    deps,
    caller,
    questions.map((q, i) => decided[i] && { ...q, decided: decided[i]!, target: found[i]! }),
    stopOnOf(semantic),
  );
  return decided.map((d) => (d ? decisionJson(d.decision, epoch) : notFoundJson(epoch)));
}

/** Each subject's organisations in the partner (only asked for when a partner-wide shared record is in question). */
export async function homeOrgsOf(
  deps: Deps,
  partnerId: string,
  subjects: Question['subject'][],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!subjects.length) return out;
  const ids = (type: SubjectType) => [...new Set(subjects.filter((s) => s.type === type).map((s) => s.id))];
  for (const row of await homeOrgRows(deps.db, ids('user'), ids('service_account'), partnerId)) {
    const key = `${row.kind}:${row.id}`;
    out.set(key, [...(out.get(key) ?? []), row.org_id]);
  }
  return out;
}

// ---- Requests ----

type Entity<T> = T | undefined;

/** A question from an evaluation (or a batch entry with the batch's defaults); a missing key is 400. */
export function questionOf(e: {
  subject: Entity<{ type: string; id: string; properties?: { ip_address?: string } & Record<string, unknown> }>;
  resource: Entity<{ type: string; id: string }>;
  action: Entity<{ name: string }>;
  dryRun?: boolean;
}): Question {
  const missing = (['subject', 'resource', 'action'] as const).filter((k) => !e[k]);
  if (missing.length)
    throw new AppError('validation_failed', `Each evaluation needs a ${missing.join(', ')} (its own or the default).`, {
      details: { fieldErrors: Object.fromEntries(missing.map((k) => [k, ['Required']])), formErrors: [] },
    });
  return {
    subject: {
      type: subjectTypeOf(e.subject!.type),
      id: e.subject!.id,
      ip: e.subject!.properties?.ip_address ?? null,
    },
    resource: { type: resourceTypeOf(e.resource!.type), id: e.resource!.id },
    permission: permissionOf(e.action!.name),
    dryRun: e.dryRun === true,
  };
}
