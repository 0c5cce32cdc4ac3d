// Onboarding a customer: enrollment keys, the contacts import, custom fields and their import, scripts, and the
// partner-wide configuration. Each part is its own route (/onboarding/<part>), loaded on demand, shown only to
// roles that may read it.
import { Stack, Tabs, Text, Title } from '@mantine/core';
import { lazy, Suspense } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { Loading } from '../../App';
import { can, useMe } from '../Shell';

const PARTS = [
  { path: 'enrollment-keys', label: 'Enrollment keys', perm: 'devices:read', Page: lazy(() => import('./EnrollmentKeys')) },
  { path: 'contacts', label: 'Contacts import', perm: 'organizations:write', Page: lazy(() => import('./ContactsImport')) },
  { path: 'custom-fields', label: 'Custom fields', perm: 'settings:read', Page: lazy(() => import('./CustomFields')) },
  { path: 'scripts', label: 'Scripts', perm: 'scripts:read', Page: lazy(() => import('./Scripts')) },
  { path: 'configuration', label: 'Configuration', perm: 'automations:read', Page: lazy(() => import('./ConfigItems')) },
] as const;

export default function Onboarding() {
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
          Onboarding
        </Title>
        <Text c="dimmed">Your role opens none of the onboarding tools (enrollment keys, contacts, custom fields, scripts, configuration).</Text>
      </Stack>
    );
  if (!part) return <Navigate to={`/onboarding/${parts[0]!.path}`} replace />;
  return (
    <Stack>
      <Title order={1} size="h2">
        Onboarding
      </Title>
      <Tabs value={part.path} onChange={(v) => v && navigate(`/onboarding/${v}`)} keepMounted={false}>
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
