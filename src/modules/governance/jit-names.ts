// Names, not ids: the person and the organisation of each just-in-time request and grant, for whoever reads them
// (the requester, the partner's admins, the organisation's admins).
import type { Executor } from '../../db/connect.js';
import { displayNames } from './repo-jit.js';

interface Named {
  userId: string;
  orgId: string;
}
type WithNames<T> = T & { userName: string | null; userEmail: string | null; orgName: string | null };
type WithGrant<T> = T extends { grant: infer G }
  ? Omit<T, 'grant'> & { grant: G extends Named ? WithNames<G> | null : G }
  : T;

/** Each item (and the grant it carries) with its person's name and e-mail and its organisation's name. */
export async function withNames<T extends Named & { grant?: Named | null }>(
  db: Executor,
  items: T[],
): Promise<WithNames<WithGrant<T>>[]> {
  const all = items.flatMap((i) => (i.grant ? [i, i.grant] : [i]));
  const { people, orgs } = await displayNames(
    db,
    [...new Set(all.map((i) => i.userId))],
    [...new Set(all.map((i) => i.orgId))],
  );
  const name = <N extends Named>(i: N): WithNames<N> => ({
    ...i,
    userName: people.get(i.userId)?.name ?? null,
    userEmail: people.get(i.userId)?.email ?? null,
    orgName: orgs.get(i.orgId) ?? null,
  });
  return items.map((i) => name(i.grant ? { ...i, grant: name(i.grant) } : i)) as WithNames<WithGrant<T>>[];
}

export async function withName<T extends Named & { grant?: Named | null }>(db: Executor, item: T) {
  return (await withNames(db, [item]))[0]!;
}
