// Onboarding a customer: enrollment keys, the contacts import, custom fields and their import, scripts, and the
// partner-wide configuration. Each part is its own route (/onboarding/<part>), loaded on demand, shown only to
// roles that may read it.
import { lazy } from 'react';
import { TabbedSection } from '../../components/TabbedSection';

const PARTS = [
  {
    path: 'enrollment-keys',
    label: 'Enrollment keys',
    perm: 'devices:read',
    Page: lazy(() => import('./EnrollmentKeys')),
  },
  {
    path: 'contacts',
    label: 'Contacts import',
    perm: 'organizations:write',
    Page: lazy(() => import('./ContactsImport')),
  },
  { path: 'custom-fields', label: 'Custom fields', perm: 'settings:read', Page: lazy(() => import('./CustomFields')) },
  { path: 'scripts', label: 'Scripts', perm: 'scripts:read', Page: lazy(() => import('./Scripts')) },
  {
    path: 'configuration',
    label: 'Configuration',
    perm: 'automations:read',
    Page: lazy(() => import('./ConfigItems')),
  },
] as const;

export default function Onboarding() {
  return (
    <TabbedSection
      title="Onboarding"
      base="onboarding"
      parts={PARTS}
      noneText="Your role opens none of the onboarding tools (enrollment keys, contacts, custom fields, scripts, configuration)."
    />
  );
}
