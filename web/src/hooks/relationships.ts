// Delegated-access relationships: the queries, and the words the console shows them in (states, durations,
// permissions, history events). The API names everything (organisation, partner, roles, sites, device groups).
import { useQuery } from '@tanstack/react-query';
import { api, call } from '../api/client';
import type { components, operations } from '../api/schema';
import { permKey, resourceLabel, useCatalog } from './roles';

export type Relationship = components['schemas']['Relationship'];
export type RelationshipStatus = Relationship['status'];
export type RelationshipEvent =
  operations['getRelationshipHistory']['responses'][200]['content']['application/json']['data'][number];

/** Each state in words, and a badge colour light enough for dark text (contrast holds whatever the shade). */
export const STATUS_WORDS: Record<RelationshipStatus, { label: string; color: string }> = {
  draft: { label: 'Draft', color: 'gray.3' },
  approval_pending: { label: 'Waiting for approval', color: 'blue.2' },
  active: { label: 'Active', color: 'green.3' },
  expiring: { label: 'Expiring', color: 'yellow.4' },
  expired: { label: 'Expired', color: 'gray.3' },
  declined: { label: 'Declined', color: 'red.2' },
  terminated: { label: 'Terminated', color: 'red.2' },
};

/** The states in which a relationship still changes and may be ended. */
export const isOpen = (s: RelationshipStatus) => ['draft', 'approval_pending', 'active', 'expiring'].includes(s);

/** The durations offered, in plain words (the API takes any ISO 8601 duration from P1D to P2Y). */
export const DURATIONS = [
  { value: 'P1D', label: '1 day' },
  { value: 'P7D', label: '1 week' },
  { value: 'P30D', label: '30 days' },
  { value: 'P90D', label: '90 days' },
  { value: 'P6M', label: '6 months' },
  { value: 'P1Y', label: '1 year' },
  { value: 'P2Y', label: '2 years (the longest)' },
];

/** An ISO 8601 duration of years, months, weeks and days in words ("1 year 6 months"). */
export function durationWords(iso: string): string {
  const m = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?$/.exec(iso);
  if (!m) return iso;
  const parts = (['year', 'month', 'week', 'day'] as const)
    .map((unit, i) => [Number(m[i + 1] ?? 0), unit] as const)
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n} ${unit}${n === 1 ? '' : 's'}`);
  return parts.join(' ') || iso;
}

/** Permissions that govern access itself: a relationship holding one never extends itself (the API's rule). */
const NO_AUTO_EXTEND = ['*:*', 'users:write', 'roles:write'];
export function blocksAutoExtend(permissions: readonly string[]): string | null {
  const covers = (held: string, k: string) => held === '*:*' || held === k || held === `${k.split(':')[0]}:*`;
  return NO_AUTO_EXTEND.find((k) => permissions.some((held) => covers(held, k))) ?? null;
}

/** A permission key in plain words, from the catalogue (wildcards spelt out). */
export function usePermissionWords() {
  const catalog = useCatalog();
  const words = new Map((catalog.data ?? []).map((e) => [permKey(e), e.description]));
  return (key: string) => {
    if (key === '*:*') return 'Everything: every permission, on every kind of record';
    const [res, action] = key.split(':');
    if (action === '*') return `${resourceLabel(res ?? '')}: everything`;
    return words.get(key) ?? `${resourceLabel(res ?? '')}: ${action}`;
  };
}

export const reachWords = (r: Pick<Relationship, 'sites' | 'deviceGroups'>) =>
  r.sites.length === 0 && r.deviceGroups.length === 0
    ? 'The whole organisation'
    : [
        r.sites.length ? `Sites: ${r.sites.map((s) => s.name).join(', ')}` : '',
        r.deviceGroups.length ? `Device groups: ${r.deviceGroups.map((g) => g.name).join(', ')}` : '',
      ]
        .filter(Boolean)
        .join('; ');

/** The reach inside a sentence: "the whole organisation", "the sites A and B", "the site A and the device group G". */
export function reachPhrase(r: Pick<Relationship, 'sites' | 'deviceGroups'>): string {
  const list = (what: string, xs: { name: string }[]) =>
    xs.length === 0
      ? ''
      : `the ${what}${xs.length > 1 ? 's' : ''} ${
          xs.length > 1
            ? `${xs
                .slice(0, -1)
                .map((x) => x.name)
                .join(', ')} and ${xs.at(-1)!.name}`
            : xs[0]!.name
        }`;
  const parts = [list('site', r.sites), list('device group', r.deviceGroups)].filter(Boolean);
  return parts.length ? parts.join(' and ') : 'the whole organisation';
}

export function useRelationship(id: string | undefined) {
  return useQuery({
    queryKey: ['relationships', 'one', id],
    enabled: !!id,
    queryFn: () => call(api.GET('/api/v1/relationships/{id}', { params: { path: { id: id! } } })),
  });
}

export function useRelationshipHistory(id: string) {
  return useQuery({
    queryKey: ['relationships', 'history', id],
    queryFn: () => call(api.GET('/api/v1/relationships/{id}/history', { params: { path: { id } } })),
  });
}

/** A history event in words: what happened, and who did it. */
export function eventWords(e: RelationshipEvent): string {
  const who = e.actorName ? `${e.actorName}${e.actorEmail ? ` (${e.actorEmail})` : ''}` : (e.actorEmail ?? 'Gatehouse');
  const until = e.endsAt ? ` until ${new Date(e.endsAt).toLocaleString()}` : '';
  const removed = [
    e.removed.roles.length ? `roles ${e.removed.roles.join(', ')}` : '',
    e.removed.sites.length ? `sites ${e.removed.sites.join(', ')}` : '',
    e.removed.deviceGroups.length ? `device groups ${e.removed.deviceGroups.join(', ')}` : '',
  ].filter(Boolean);
  switch (e.action) {
    case 'relationship.create':
      return `Drafted by ${who}`;
    case 'relationship.request':
      return `Sent for approval by ${who}`;
    case 'relationship.update':
      return removed.length ? `Narrowed by ${who}: removed ${removed.join('; ')}` : `Changed by ${who}`;
    case 'relationship.approve':
      return `Approved by ${who}${until}`;
    case 'relationship.decline':
      return `Declined by ${who}`;
    case 'relationship.terminate':
      return `Terminated by ${who}${e.side === 'organization' ? ' (the organisation)' : e.side === 'partner' ? ' (the partner)' : ''}`;
    case 'relationship.extend':
      return `Extended automatically${until}`;
    case 'relationship.expire':
      return 'Expired';
    default:
      return `${e.action} by ${who}`;
  }
}
