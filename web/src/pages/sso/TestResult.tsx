// The result of POST /sso/providers/:id/test: OpenID discovery (the endpoints found), SAML metadata (the SSO URL
// and each signing certificate with its expiry), or the failure in the API's words.
import { Alert, List, Modal, Stack, Text } from '@mantine/core';
import { explain } from '../../lib/errors';
import type { Provider, TestResult as Result } from './data';
import { CopyValue } from './RegisterAt';

export function TestResult({
  provider,
  result,
  error,
  pending,
  onClose,
}: {
  provider: Provider;
  result?: Result;
  error: unknown;
  pending: boolean;
  onClose: () => void;
}) {
  return (
    <Modal opened onClose={onClose} title={`Test of ${provider.name}`} size="lg">
      <div aria-live="polite" data-testid="test-result">
        {pending ? (
          <Text aria-busy="true">
            {provider.type === 'saml'
              ? 'Reading the IdP’s metadata…'
              : 'Asking the issuer for its OpenID configuration…'}
          </Text>
        ) : error ? (
          <Alert color="red" role="alert">
            {explain(error)}
          </Alert>
        ) : !result ? null : result.ok === false ? (
          <Alert color="red" title="The test failed">
            <Text size="sm">{result.error}</Text>
            <Text size="sm" mt="xs">
              Check the {provider.type === 'saml' ? 'metadata URL or XML' : 'issuer, client ID and secret'} and that the
              identity provider is reachable from this server.
            </Text>
          </Alert>
        ) : 'certificates' in result ? (
          <Stack>
            <Alert color="green" title="The metadata is usable">
              Gatehouse can send people to this identity provider and check what it answers.
            </Alert>
            <CopyValue label="IdP entity id" value={result.issuer} />
            <CopyValue label="Single sign-on URL" value={result.ssoUrl} />
            <Text size="sm" fw={600}>
              Signing certificates
            </Text>
            <List size="sm">
              {result.certificates.map((c) => (
                <List.Item key={c.fingerprintSha256}>
                  {c.subject}: valid until {new Date(c.notAfter).toLocaleDateString()}
                  {c.expired ? ' (expired: ask the IdP for a new one)' : ''}
                </List.Item>
              ))}
            </List>
          </Stack>
        ) : (
          <Stack>
            <Alert color="green" title="Discovery succeeded">
              The issuer answered with its OpenID configuration.
            </Alert>
            <CopyValue label="Issuer" value={result.issuer} />
            <CopyValue label="Authorization endpoint" value={result.authorizationEndpoint} />
            <CopyValue label="Token endpoint" value={result.tokenEndpoint} />
            <CopyValue label="Signing keys (JWKS)" value={result.jwksUri} />
          </Stack>
        )}
      </div>
    </Modal>
  );
}
