// In-memory indexes of an organisation's contacts for one import: exact keys (externalId, previousId) and
// fuzzy ones (normalised email, similar names). Rows created earlier in the same file are indexed too.
import { distance } from 'fastest-levenshtein';

export interface ContactLike {
  id: string;
  externalId: string | null;
  previousId: string | null;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
}

/** Lower case, no +tag, and for Gmail no dots: the same mailbox written differently. */
export function normaliseEmail(email: string): string {
  const [local = '', domain = ''] = email.trim().toLowerCase().split(/@(?=[^@]*$)/);
  const base = local.split('+')[0]!;
  const d = domain === 'googlemail.com' ? 'gmail.com' : domain;
  return `${d === 'gmail.com' ? base.replace(/\./g, '') : base}@${d}`;
}

const norm = (s: string | null) =>
  (s ?? '')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');

export interface FuzzyMatch {
  contactId: string;
  reason: 'email' | 'name';
  score: number;
}

export class ContactIndex {
  private readonly byExternal = new Map<string, ContactLike>();
  private readonly byPrevious = new Map<string, ContactLike>();
  private readonly byEmail = new Map<string, ContactLike>();
  private readonly byLastName = new Map<string, ContactLike[]>();

  constructor(rows: ContactLike[]) {
    for (const r of rows) this.add(r);
  }

  add(c: ContactLike): void {
    if (c.externalId) this.byExternal.set(c.externalId, c);
    if (c.previousId) this.byPrevious.set(c.previousId, c);
    if (c.email) this.byEmail.set(normaliseEmail(c.email), c);
    const last = norm(c.lastName);
    if (last) this.byLastName.set(last, [...(this.byLastName.get(last) ?? []), c]);
  }

  /** Replaces the indexed copy after an update. */
  replace(before: ContactLike, after: ContactLike): void {
    if (before.externalId) this.byExternal.delete(before.externalId);
    if (before.previousId) this.byPrevious.delete(before.previousId);
    if (before.email) this.byEmail.delete(normaliseEmail(before.email));
    const last = norm(before.lastName);
    if (last) this.byLastName.set(last, (this.byLastName.get(last) ?? []).filter((c) => c.id !== before.id));
    this.add(after);
  }

  exact(externalId: string | null, previousId: string | null): ContactLike | null {
    return (externalId ? this.byExternal.get(externalId) : undefined) ?? (previousId ? this.byPrevious.get(previousId) : undefined) ?? null;
  }

  /** A same-mailbox email, or the same last name with a first name at most two edits away. */
  fuzzy(row: { email: string | null; firstName: string | null; lastName: string | null }): FuzzyMatch | null {
    if (row.email) {
      const hit = this.byEmail.get(normaliseEmail(row.email));
      if (hit) return { contactId: hit.id, reason: 'email', score: 1 };
    }
    const last = norm(row.lastName);
    const first = norm(row.firstName);
    if (!last || !first) return null;
    let best: FuzzyMatch | null = null;
    for (const c of this.byLastName.get(last) ?? []) {
      const other = norm(c.firstName);
      if (!other) continue;
      const d = distance(first, other);
      const score = 1 - d / Math.max(first.length, other.length);
      if (d <= 2 && score >= 0.6 && (!best || score > best.score)) best = { contactId: c.id, reason: 'name', score: Math.round(score * 100) / 100 };
    }
    return best;
  }
}
