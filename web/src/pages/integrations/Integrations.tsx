// Integrations: machine access to Gatehouse. Service accounts and their API keys, audit webhooks, SCIM tokens.
// Each part is its own route (/integrations/<part>), loaded on demand, shown only to roles that may read it.
import { lazy } from 'react';
import { TabbedSection } from '../../components/TabbedSection';

const PARTS = [
  {
    path: 'service-accounts',
    label: 'Service accounts',
    perm: 'api_keys:read',
    Page: lazy(() => import('./ServiceAccounts')),
  },
  { path: 'webhooks', label: 'Webhooks', perm: 'audit:manage', Page: lazy(() => import('./Webhooks')) },
  { path: 'scim-tokens', label: 'SCIM tokens', perm: 'users:read', Page: lazy(() => import('./ScimTokens')) },
] as const;

export default function Integrations() {
  return (
    <TabbedSection
      title="Integrations"
      base="integrations"
      parts={PARTS}
      noneText="Your role opens none of the integrations (service accounts, webhooks, SCIM tokens)."
    />
  );
}
