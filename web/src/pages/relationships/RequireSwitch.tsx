// The partner's adoption switch: off, its staff reach organisations as their standing access says (today's
// behaviour); on, they reach an organisation only through an active relationship with it, within its roles and reach.
import { Switch } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import { can, useMe } from '../../hooks/me';
import { done, failed } from '../onboarding/common';

export function RequireRelationshipsSwitch() {
  const me = useMe();
  const qc = useQueryClient();
  const partner = useQuery({
    queryKey: ['partner', 'me'],
    queryFn: async () =>
      (await call(api.GET('/api/v1/orgs/partners/me'))) as { settings?: { requireRelationships?: boolean } },
  });
  const set = useMutation({
    mutationFn: (on: boolean) =>
      call(api.PATCH('/api/v1/orgs/partners/me', { body: { settings: { requireRelationships: on } } })),
    onSuccess: (_r, on) => {
      done(
        on
          ? 'Your staff now reach an organisation only through an active relationship with it.'
          : 'Your staff reach organisations as their standing access says; relationships no longer limit them.',
      );
      void qc.invalidateQueries({ queryKey: ['partner', 'me'] });
    },
    onError: failed,
  });
  const on = partner.data?.settings?.requireRelationships === true;
  return (
    <Switch
      label="Staff reach an organisation only through an approved relationship"
      description={
        on
          ? 'On: an organisation without an active relationship is closed to your staff; inside one they hold their role’s permissions within the relationship’s roles and reach.'
          : 'Off: your staff reach organisations as their standing access says (each organisation behaves as if it had an open-ended relationship).'
      }
      checked={on}
      disabled={partner.isPending || set.isPending || !can(me.data, 'settings:write')}
      onChange={(e) => set.mutate(e.currentTarget.checked)}
      maw={760}
    />
  );
}
