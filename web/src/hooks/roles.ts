// The roles queries (the catalogue, every role of a scope, a role's effective permissions) and the catalogue's
// words, shared by the roles, access, integrations and single sign-on pages.
import { useQuery } from '@tanstack/react-query';
import { api, call } from '../api/client';
import type { components } from '../api/schema';

export type Role = components['schemas']['Role'];
export interface CatalogEntry {
  resource: string;
  action: string;
  description: string;
}

/** The assignable permissions, from GET /permissions/catalog (the same constants the API checks). */
export function useCatalog(enabled = true) {
  return useQuery({
    queryKey: ['permission-catalog'],
    enabled,
    staleTime: Infinity,
    queryFn: async () => (await call(api.GET('/api/v1/permissions/catalog'))).permissions as CatalogEntry[],
  });
}

/** Every role of the scope (for the parent picker): the API's largest page. */
export function useAllRoles(orgId: string | undefined, enabled = true) {
  return useQuery({
    queryKey: ['roles', orgId, 'all'],
    enabled,
    queryFn: async () => (await call(api.GET('/api/v1/roles', { params: { query: { orgId, limit: 200 } } }))).data,
  });
}

export function useEffectivePermissions(roleId: string | null | undefined, orgId: string | undefined) {
  return useQuery({
    queryKey: ['roles', orgId, 'effective', roleId],
    enabled: !!roleId,
    queryFn: async () =>
      call(
        api.GET('/api/v1/roles/{id}/effective-permissions', { params: { path: { id: roleId! }, query: { orgId } } }),
      ),
  });
}

const RESOURCE_WORDS: Record<string, string> = {
  ai_agents: 'AI agents',
  users: 'Users and roles',
  settings: 'Settings, SSO and custom fields',
  organizations: 'Organisations and contacts',
  sites: 'Sites and device groups',
  remote: 'Remote access',
  topology: 'Network topology',
  audit: 'Audit trail',
};

export const resourceLabel = (r: string) =>
  RESOURCE_WORDS[r] ?? r.charAt(0).toUpperCase() + r.slice(1).replace(/_/g, ' ');

export const permKey = (p: { resource: string; action: string }) => `${p.resource}:${p.action}`;

/** Catalogue entries grouped by resource, in catalogue order. */
export function groupByResource(entries: CatalogEntry[]): [string, CatalogEntry[]][] {
  const groups = new Map<string, CatalogEntry[]>();
  for (const e of entries) groups.set(e.resource, [...(groups.get(e.resource) ?? []), e]);
  return [...groups];
}
