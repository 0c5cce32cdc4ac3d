// What the authorization API reads from the database (the records' owners, the subjects' membership rows), kept on
// this instance per decision epoch: every request reads the epoch first (one short statement), and any change on any
// instance to what a decision reads moves it, which empties the cache. Only facts are kept, never decisions: the
// principal is rebuilt from the rows at each request's own time (a just-in-time grant or a relationship ends on time).
// Absence is kept only where its end moves the epoch (a new membership does; a new device or service account does not).
import type { Deps } from '../../deps.js';
import type { AccountSubjectRow, OwnerRow, SubjectFactsRow } from './repo.js';

const MAX_ENTRIES = 100_000;

export class DecisionFacts {
  private epoch = -1;
  private readonly entries = new Map<string, OwnerRow | SubjectFactsRow[] | AccountSubjectRow[]>();

  /** Moves the cache to `epoch` (a newer one empties it); whether it holds facts of `epoch` now. */
  at(epoch: number): boolean {
    if (epoch > this.epoch) {
      this.entries.clear();
      this.epoch = epoch;
    }
    return epoch === this.epoch;
  }

  get<T>(epoch: number, key: string): T | undefined {
    return epoch === this.epoch ? (this.entries.get(key) as T | undefined) : undefined;
  }

  /** Keeps a fact read at `epoch`, unless the cache has moved past it meanwhile (the fact may predate a change). */
  set(epoch: number, key: string, value: OwnerRow | SubjectFactsRow[] | AccountSubjectRow[]): void {
    if (epoch !== this.epoch) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, value);
  }
}

const perApp = new WeakMap<Deps, DecisionFacts>();

/** The app's cache (one per Deps, that is per running app). */
export function decisionFacts(deps: Deps): DecisionFacts {
  let facts = perApp.get(deps);
  if (!facts) perApp.set(deps, (facts = new DecisionFacts()));
  return facts;
}
