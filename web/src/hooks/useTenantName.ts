// The name of the tenant the caller acts in (its partner, or its organisation), for the header: read from the
// caller's own named memberships, which every signed-in person may read whatever their role.
import { useQuery } from '@tanstack/react-query';
import { api, call } from '../api/client';

export function useTenantName(me: { scope: 'partner' | 'organization' | null; orgId: string | null } | undefined) {
  const q = useQuery({
    queryKey: ['tenant-name', me?.scope, me?.orgId],
    enabled: !!me?.scope,
    retry: false,
    queryFn: async () => {
      const current = (await call(api.GET('/api/v1/auth/memberships'))).data.find((m) => m.current);
      return current ? (current.orgName ?? current.partnerName) : null;
    },
  });
  return q.data ?? null;
}
