// The page a signed-in person lands on: for a partner's administrator, the getting-started checklist; for everyone, a
// word on where things are. (No links here repeat the navigation's: one name, one link.)
import { Stack, Text, Title } from '@mantine/core';
import { can, useMe } from '../../hooks/me';
import { useTenantName } from '../../hooks/useTenantName';
import { GettingStarted } from './GettingStarted';

export default function Home() {
  const me = useMe();
  const m = me.data;
  const tenant = useTenantName(m);
  return (
    <Stack>
      <Title order={1} size="h2">
        Home
      </Title>
      <Text>
        {tenant ? `Welcome to ${tenant}'s console` : 'Welcome'}
        {m?.name ? `, ${m.name}.` : '.'} The menu lists the pages your role opens.
      </Text>
      {m?.scope === 'partner' && m.partnerId && can(m, 'settings:write') && <GettingStarted partnerId={m.partnerId} />}
    </Stack>
  );
}
