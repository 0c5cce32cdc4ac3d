// Integrations: machine access to Gatehouse. Service accounts and their API keys, audit webhooks, SCIM tokens.
// Each part is its own route (/integrations/<part>), loaded on demand, shown only to roles that may read it.
import { Stack, Tabs, Text, Title } from '@mantine/core';
import { lazy, Suspense } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { Loading } from '../../App';
import { can, useMe } from '../Shell';

const PARTS = [
  { path: 'service-accounts', label: 'Service accounts', perm: 'api_keys:read', Page: lazy(() => import('./ServiceAccounts')) },
  { path: 'webhooks', label: 'Webhooks', perm: 'audit:manage', Page: lazy(() => import('./Webhooks')) },
  { path: 'scim-tokens', label: 'SCIM tokens', perm: 'users:read', Page: lazy(() => import('./ScimTokens')) },
] as const;

export default function Integrations() {
  const me = useMe();
  const loc = useLocation();
  const navigate = useNavigate();
  const parts = PARTS.filter((p) => can(me.data, p.perm));
  const current = loc.pathname.split('/')[2];
  const part = parts.find((p) => p.path === current);
  if (me.isPending) return <Loading />;
  if (!parts.length)
    return (
      <Stack>
        <Title order={1} size="h2">
          Integrations
        </Title>
        <Text c="dimmed">Your role opens none of the integrations (service accounts, webhooks, SCIM tokens).</Text>
      </Stack>
    );
  if (!part) return <Navigate to={`/integrations/${parts[0]!.path}`} replace />;
  return (
    <Stack>
      <Title order={1} size="h2">
        Integrations
      </Title>
      <Tabs value={part.path} onChange={(v) => v && navigate(`/integrations/${v}`)} keepMounted={false}>
        <Tabs.List>
          {parts.map((p) => (
            <Tabs.Tab key={p.path} value={p.path}>
              {p.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {parts.map((p) => (
          <Tabs.Panel key={p.path} value={p.path} pt="md">
            <Suspense fallback={<Loading />}>
              <p.Page />
            </Suspense>
          </Tabs.Panel>
        ))}
      </Tabs>
    </Stack>
  );
}
