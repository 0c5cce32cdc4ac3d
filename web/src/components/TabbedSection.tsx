// A console section made of parts, each its own route (/<base>/<part>), loaded on demand, shown only to roles that
// may read it (the Onboarding and Integrations pages).
import { Stack, Tabs, Text, Title } from '@mantine/core';
import { Suspense, type ComponentType } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { Loading } from './Loading';
import { can, useMe } from '../hooks/me';

export interface Part {
  path: string;
  label: string;
  /** null: every signed-in member (the API decides what each sees). */
  perm: string | null;
  Page: ComponentType;
}

export function TabbedSection({
  title,
  base,
  parts: all,
  noneText,
}: {
  title: string;
  base: string;
  parts: readonly Part[];
  noneText: string;
}) {
  const me = useMe();
  const loc = useLocation();
  const navigate = useNavigate();
  const parts = all.filter((p) => p.perm === null || can(me.data, p.perm));
  const current = loc.pathname.split('/')[2];
  const part = parts.find((p) => p.path === current);
  if (me.isPending) return <Loading />;
  if (!parts.length)
    return (
      <Stack>
        <Title order={1} size="h2">
          {title}
        </Title>
        <Text c="dimmed">{noneText}</Text>
      </Stack>
    );
  if (!part) return <Navigate to={`/${base}/${parts[0]!.path}`} replace />;
  return (
    <Stack>
      <Title order={1} size="h2">
        {title}
      </Title>
      <Tabs value={part.path} onChange={(v) => v && navigate(`/${base}/${v}`)} keepMounted={false}>
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
