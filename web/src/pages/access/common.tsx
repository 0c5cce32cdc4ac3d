// Shared parts of the access pages: organisation names and the words for durations and approval policies.
import { useOrganizations } from '../../hooks/organizations';

/** The name of an organisation the caller can see, else its id (an eligible member sees no organisation until granted). */
export function useOrgNames() {
  const orgs = useOrganizations();
  const names = new Map((orgs.data ?? []).map((o) => [o.id, o.name]));
  return { orgs: orgs.data ?? [], name: (id: string) => names.get(id) ?? id };
}

export const minutesText = (m: number) =>
  m % 60 === 0 ? `${m / 60} h` : m > 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m} min`;

export const APPROVAL_WORDS: Record<'auto' | 'partner_admin' | 'customer_admin', string> = {
  auto: 'Granted at once',
  partner_admin: 'A Partner Admin approves',
  customer_admin: 'An admin of the organisation approves',
};
