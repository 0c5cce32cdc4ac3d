// Partner-side access groups: the queries of the groups, their members, the partner's staff who may join, and the
// partner-level SCIM groups a group may follow.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, call } from '../api/client';
import type { components } from '../api/schema';

export type AccessGroup = components['schemas']['AccessGroup'];
export type AccessGroupMember = components['schemas']['AccessGroupMember'];

/** The partner's groups by name; with `relationshipId`, only those attached to that relationship. */
export function useAccessGroups(relationshipId?: string) {
  return useQuery({
    queryKey: ['access-groups', 'list', relationshipId ?? null],
    queryFn: () => call(api.GET('/api/v1/access-groups', { params: { query: { relationshipId, limit: 200 } } })),
  });
}

export function useAccessGroup(id: string | undefined) {
  return useQuery({
    queryKey: ['access-groups', 'one', id],
    enabled: !!id,
    queryFn: () => call(api.GET('/api/v1/access-groups/{id}', { params: { path: { id: id! } } })),
  });
}

export function useGroupMembers(id: string) {
  return useQuery({
    queryKey: ['access-groups', 'members', id],
    queryFn: () =>
      call(api.GET('/api/v1/access-groups/{id}/members', { params: { path: { id }, query: { limit: 200 } } })),
  });
}

/** The partner-level SCIM groups of the partner's identity provider (none without SCIM). */
export function useScimGroups() {
  return useQuery({
    queryKey: ['access-groups', 'scim-groups'],
    queryFn: () => call(api.GET('/api/v1/access-groups/scim-groups')),
  });
}

/** The partner's staff who have an account (invitations not yet accepted cannot join a group), by name. */
export function usePartnerStaff() {
  return useQuery({
    queryKey: ['users', 'partner-staff'],
    queryFn: () => call(api.GET('/api/v1/users', { params: { query: { limit: 200 } } })),
    select: (d) =>
      d.data
        .flatMap((u) => ('name' in u ? [{ id: u.id, name: u.name, email: u.email }] : []))
        .sort((a, b) => a.name.localeCompare(b.name)),
  });
}

/** After any change: the groups, their members and the relationships' pages read again. */
export function useGroupsChanged() {
  const qc = useQueryClient();
  return () => void qc.invalidateQueries({ queryKey: ['access-groups'] });
}
