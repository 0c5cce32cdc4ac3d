// Types and queries shared by the SSO providers page, its form and its test result.
import { useQuery } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import type { components, operations } from '../../api/schema';

export type Provider = components['schemas']['SsoProvider'];
export type Preset = operations['getSsoPresets']['responses'][200]['content']['application/json']['data'][number];
export type TestResult = operations['postSsoProvidersByIdTest']['responses'][200]['content']['application/json'];
export type Status = Provider['status'];

export function usePresets(enabled = true) {
  return useQuery({
    queryKey: ['sso-presets'],
    enabled,
    staleTime: Infinity,
    queryFn: async () => (await call(api.GET('/api/v1/sso/presets'))).data,
  });
}

export function useProviders(orgId: string | undefined) {
  return useQuery({
    queryKey: ['sso-providers', orgId],
    queryFn: async () => (await call(api.GET('/api/v1/sso/providers', { params: { query: { orgId } } }))).data,
  });
}

export const STATUS_WORDS: Record<Status, string> = {
  active: 'Active: offered at sign-in',
  testing: 'Testing: set up, not offered at sign-in yet',
  inactive: 'Inactive: nobody signs in with it',
};

/** Enforcing SSO through a provider whose discovery test never passed (the API's `provider_untested` warning). */
export const untested = (p: Pick<Provider, 'enforceSSO' | 'lastTestedAt' | 'warnings'>) =>
  !!p.warnings?.includes('provider_untested') || (p.enforceSSO && !p.lastTestedAt);

export const UNTESTED_TEXT =
  'Single sign-on is enforced through a provider that has never passed a test. If its settings are wrong, nobody but the partner’s administrators can sign in: run “Test” now.';

/** The domains a provider lists that its tenant has not proven: single sign-on does not act on them. */
export const unprovenDomains = (p: Pick<Provider, 'domains'>) =>
  (p.domains ?? []).filter((d) => !d.proven).map((d) => d.domain);
