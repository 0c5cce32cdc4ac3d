// The name of the tenant the caller acts in (its partner, or its organisation), for the header.
import { useQuery } from '@tanstack/react-query';
import { api, call } from '../api/client';

export function useTenantName(me: { scope: 'partner' | 'organization' | null; orgId: string | null } | undefined) {
  const q = useQuery({
    queryKey: ['tenant-name', me?.scope, me?.orgId],
    enabled: !!me?.scope,
    retry: false,
    queryFn: async () =>
      (
        (me?.scope === 'organization' && me.orgId
          ? await call(api.GET('/api/v1/orgs/organizations/{id}', { params: { path: { id: me.orgId } } }))
          : await call(api.GET('/api/v1/orgs/partners/me'))) as { name: string }
      ).name,
  });
  return q.data ?? null;
}
