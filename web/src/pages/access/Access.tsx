// Access governance: just-in-time requests and grants, the customer's view of its partner's staff, and
// "why can X do Y on Z". Each part is its own route (/access/<part>), loaded on demand, shown only to roles that may
// read it (requests and grants are everyone's own: the API decides what each caller sees).
import { lazy } from 'react';
import { TabbedSection } from '../../components/TabbedSection';

const PARTS = [
  { path: 'requests', label: 'Requests and grants', perm: null, Page: lazy(() => import('./Requests')) },
  { path: 'customer-view', label: 'Partner access', perm: 'users:read', Page: lazy(() => import('./CustomerView')) },
  { path: 'explain', label: 'Explain', perm: 'users:read', Page: lazy(() => import('./Explain')) },
] as const;

export default function Access() {
  return (
    <TabbedSection title="Access" base="access" parts={PARTS} noneText="Your role opens none of the access pages." />
  );
}
