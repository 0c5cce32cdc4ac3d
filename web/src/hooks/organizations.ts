// The organisations the caller can see, for pickers and filters across the console.
import { useQuery } from '@tanstack/react-query';
import { api, call } from '../api/client';

export interface Named {
  id: string;
  name: string;
}

export function useOrganizations(enabled = true) {
  return useQuery({
    queryKey: ['organizations'],
    enabled,
    queryFn: async () =>
      (await call(api.GET('/api/v1/orgs/organizations', { params: { query: { limit: 200 } } }))).data as Named[],
  });
}
