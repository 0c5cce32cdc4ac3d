// The custom-field definitions of an organisation, shared by the custom-fields page and its import wizard.
import { useQuery } from '@tanstack/react-query';
import { api, call } from '../api/client';

export interface Definition {
  id: string;
  orgId: string | null;
  key: string;
  name: string;
  type: 'text' | 'number' | 'boolean' | 'date' | 'select';
  options: string[] | null;
  entityType: EntityType;
  source: 'partner' | 'organization';
}
export type EntityType = 'device' | 'site' | 'organization' | 'contact';
export const ENTITY_LABELS: Record<EntityType, string> = {
  device: 'Devices',
  site: 'Sites',
  organization: 'Organisations',
  contact: 'Contacts',
};

export function useDefinitions(orgId: string | null, entityType?: EntityType) {
  return useQuery({
    queryKey: ['custom-fields', orgId, entityType],
    enabled: !!orgId,
    queryFn: async () =>
      (await call(api.GET('/api/v1/custom-fields', { params: { query: { orgId: orgId!, entityType, limit: 200 } } })))
        .data as Definition[],
  });
}
