// The development-mode banner: shown on every signed-in page while the server runs in development mode (single
// sign-on and webhooks may reach this machine), read from the readiness probe so the console says what the server does.
import { Alert } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';

export function DevModeBanner() {
  const ready = useQuery({
    queryKey: ['readyz'],
    staleTime: 5 * 60_000,
    retry: false,
    queryFn: async () => {
      const res = await fetch('/readyz', { headers: { accept: 'application/json' } });
      return res.ok ? ((await res.json()) as { devMode?: boolean }) : {};
    },
  });
  if (!ready.data?.devMode) return null;
  return (
    <Alert color="yellow" role="status" data-testid="dev-mode-banner" mb="md" title="Development mode">
      Single sign-on and audit webhooks may reach this machine (localhost), over http too. Production refuses this mode.
    </Alert>
  );
}
