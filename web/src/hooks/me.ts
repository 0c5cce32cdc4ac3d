// The signed-in caller (GET /auth/me) and what the console may show them.
import { useQuery } from '@tanstack/react-query';
import { api, call } from '../api/client';

export interface Me {
  id: string;
  email: string;
  name: string | null;
  scope: 'partner' | 'organization' | null;
  partnerId: string | null;
  orgId: string | null;
  permissions: string[];
  mfaEnabled: boolean;
}

export function useMe() {
  return useQuery({ queryKey: ['me'], queryFn: async () => (await call(api.GET('/api/v1/auth/me'))) as unknown as Me });
}

/** `*:*` or the exact permission, or the resource's wildcard. */
export function can(me: Me | undefined, perm: string) {
  if (!me) return false;
  const [res] = perm.split(':');
  return me.permissions.some((p) => p === '*:*' || p === perm || p === `${res}:*`);
}
