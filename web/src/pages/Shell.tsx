// The signed-in frame: navigation (pages load on demand) and the account menu.
import { DevModeBanner } from '../components/DevModeBanner';
import { Button, Group, NavLink, Text } from '@mantine/core';
import { lazy, Suspense } from 'react';
import { Link, Navigate, Route, Routes, useLocation, useNavigate } from 'react-router';
import { api } from '../api/client';
import { session } from '../api/session';
import { Loading } from '../components/Loading';
import { can, useMe } from '../hooks/me';
import { StepUpPrompt } from '../components/StepUpPrompt';
import { useTenantName } from '../hooks/useTenantName';

const Account = lazy(() => import('./account/Account'));
const Invitations = lazy(() => import('./account/Invitations'));
const Users = lazy(() => import('./users/Users'));
const Tenants = lazy(() => import('./tenants/Tenants'));
const Roles = lazy(() => import('./roles/Roles'));
const Audit = lazy(() => import('./audit/Audit'));
const SsoProviders = lazy(() => import('./sso/SsoProviders'));
const Domains = lazy(() => import('./domains/Domains'));
const Onboarding = lazy(() => import('./onboarding/Onboarding'));
const Integrations = lazy(() => import('./integrations/Integrations'));
const Access = lazy(() => import('./access/Access'));
const SecurityPolicy = lazy(() => import('./security/SecurityPolicy'));
const Relationships = lazy(() => import('./relationships/Relationships'));
const Home = lazy(() => import('./home/Home'));

const NAV: { to: string; label: string; perm: string | string[] | null }[] = [
  { to: '/home', label: 'Home', perm: null },
  { to: '/users', label: 'Users', perm: 'users:read' },
  { to: '/tenants', label: 'Tenants', perm: 'organizations:read' },
  { to: '/roles', label: 'Roles', perm: 'users:read' },
  { to: '/security', label: 'Security policy', perm: 'settings:read' },
  { to: '/sso', label: 'Single sign-on', perm: 'settings:read' },
  { to: '/domains', label: 'Domains', perm: 'settings:read' },
  { to: '/audit', label: 'Audit', perm: 'audit:read' },
  {
    to: '/onboarding',
    label: 'Onboarding',
    perm: ['devices:read', 'organizations:write', 'settings:read', 'scripts:read', 'automations:read'],
  },
  { to: '/integrations', label: 'Integrations', perm: ['api_keys:read', 'audit:manage', 'users:read'] },
  { to: '/relationships', label: 'Relationships', perm: 'users:read' },
  { to: '/access', label: 'Access', perm: null },
  { to: '/account', label: 'My account', perm: null },
];

export default function Shell() {
  const me = useMe();
  const loc = useLocation();
  const navigate = useNavigate();
  const logout = async () => {
    await api.POST('/api/v1/auth/logout').catch(() => undefined);
    session.clear();
    navigate('/login', { replace: true });
  };
  const tenantName = useTenantName(me.data);
  const items = NAV.filter((n) => !n.perm || [n.perm].flat().some((p) => can(me.data, p)));
  return (
    <div className="gh-shell">
      <header className="gh-header">
        <Group h="100%" px="md" justify="space-between">
          <Group gap="xs">
            <img src="/favicon.svg" alt="" width={24} height={24} />
            <Text fw={700}>Gatehouse</Text>
            {tenantName && (
              <Text fw={500} data-testid="tenant-name">
                · {tenantName}
              </Text>
            )}
          </Group>
          <Group gap="sm">
            <Text size="sm" c="dimmed" data-testid="whoami">
              {me.data?.email}
            </Text>
            <Button variant="default" size="xs" onClick={() => void logout()}>
              Sign out
            </Button>
          </Group>
        </Group>
      </header>
      <nav className="gh-nav" aria-label="Main">
        {items.map((n) => (
          <NavLink
            key={n.to}
            component={Link}
            to={n.to}
            label={n.label}
            variant="filled"
            active={loc.pathname.startsWith(n.to)}
          />
        ))}
      </nav>
      <main className="gh-main">
        <DevModeBanner />
        <Suspense fallback={<Loading />}>
          <Routes>
            <Route path="/home" element={<Home />} />
            <Route path="/account" element={<Account />} />
            <Route path="/invitations" element={<Invitations />} />
            <Route path="/users" element={<Users />} />
            <Route path="/tenants" element={<Tenants />} />
            <Route path="/roles" element={<Roles />} />
            <Route path="/audit" element={<Audit />} />
            <Route path="/sso" element={<SsoProviders />} />
            <Route path="/domains" element={<Domains />} />
            <Route path="/onboarding/*" element={<Onboarding />} />
            <Route path="/integrations/*" element={<Integrations />} />
            <Route path="/access/*" element={<Access />} />
            <Route path="/relationships/*" element={<Relationships />} />
            <Route path="/security" element={<SecurityPolicy />} />
            <Route path="*" element={me.isPending ? <Loading /> : <Navigate to="/home" replace />} />
          </Routes>
        </Suspense>
      </main>
      <StepUpPrompt />
    </div>
  );
}
