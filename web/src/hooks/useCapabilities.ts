// What the caller may do on a tenant, decided by the server (GET /access/capabilities) once per page: the console
// hides or disables the rest and shows the server's reason, never a guess of its own.
import { useQuery } from '@tanstack/react-query';
import { api, call } from '../api/client';

export interface Capability {
  action: string;
  allowed: boolean;
  reason: string | null;
}

export function useCapabilities(orgId?: string | null) {
  const q = useQuery({
    queryKey: ['capabilities', orgId ?? null],
    queryFn: async () =>
      (await call(api.GET('/api/v1/access/capabilities', { params: { query: orgId ? { orgId } : {} } }))) as {
        actions: Capability[];
      },
  });
  const of = (action: string): Capability =>
    q.data?.actions.find((a) => a.action === action) ?? { action, allowed: false, reason: null };
  return { ready: q.isSuccess, of, allowed: (action: string) => of(action).allowed };
}
