// Create a provider from a preset, or change one. OpenID Connect (issuer, client id and secret, scopes) or SAML 2.0
// (the IdP's metadata by URL or as XML, attribute names); then who may use it: allowed domains, automatic
// provisioning with a default role, enforce SSO, trust the IdP's MFA. New providers start inactive.
import {
  Alert,
  Button,
  Checkbox,
  Group,
  Modal,
  PasswordInput,
  Radio,
  Select,
  Stack,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import type { operations } from '../../api/schema';
import { explain } from '../../lib/errors';
import { useAllRoles } from '../../hooks/roles';
import { fieldsNamed, useFieldErrors } from '../../hooks/useFieldErrors';
import { FormError } from '../../components/FormError';
import { UNTESTED_TEXT, untested, usePresets, type Provider } from './data';
import { RegisterAt } from './RegisterAt';
import { SamlFields } from './SamlFields';
import { Warning } from './Warning';

type Kind = 'oidc' | 'saml';
type PresetId = NonNullable<operations['postSsoProviders']['requestBody']['content']['application/json']['preset']>;
const PLACEHOLDER = /\{[^}]+\}/;
const DOMAIN = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
/** The API's fields that have their own input here (the rest of a refusal shows at the top). */
const fieldOf = fieldsNamed(
  'name',
  'issuer',
  'clientId',
  'clientSecret',
  'scopes',
  'metadataUrl',
  'metadataXml',
  'emailAttribute',
  'nameAttribute',
  'allowedDomains',
  'defaultRoleId',
);

export function ProviderForm({
  provider,
  orgId,
  onClose,
}: {
  provider: Provider | null;
  orgId?: string;
  onClose: () => void;
}) {
  const qc = useQueryClient();
  const presets = usePresets();
  const roles = useAllRoles(orgId);
  const editing = !!provider;
  const [presetId, setPresetId] = useState<string | null>(null);
  const [kind, setKind] = useState<Kind>(provider?.type ?? 'oidc');
  const [name, setName] = useState(provider?.name ?? '');
  const [issuer, setIssuer] = useState(provider?.type === 'oidc' ? provider.issuer : '');
  const [clientId, setClientId] = useState(provider?.type === 'oidc' ? provider.clientId : '');
  const [clientSecret, setClientSecret] = useState('');
  const [scopes, setScopes] = useState(provider?.scopes || 'openid email profile');
  const [source, setSource] = useState<'url' | 'xml'>(
    provider?.type === 'saml' && !provider.metadataUrl ? 'xml' : 'url',
  );
  const [metadataUrl, setMetadataUrl] = useState(provider?.metadataUrl ?? '');
  const [metadataXml, setMetadataXml] = useState('');
  const [emailAttribute, setEmailAttribute] = useState(provider?.emailAttribute ?? '');
  const [nameAttribute, setNameAttribute] = useState(provider?.nameAttribute ?? '');
  const [domains, setDomains] = useState<string[]>(provider?.allowedDomains ? provider.allowedDomains.split(',') : []);
  const [autoProvision, setAutoProvision] = useState(provider?.autoProvision ?? false);
  const [defaultRoleId, setDefaultRoleId] = useState<string | null>(provider?.defaultRoleId ?? null);
  const [enforceSSO, setEnforceSSO] = useState(provider?.enforceSSO ?? false);
  const [trustIdpMfa, setTrustIdpMfa] = useState(provider?.trustIdpMfa ?? false);

  const errors = useFieldErrors(fieldOf, [
    presetId,
    kind,
    name,
    issuer,
    clientId,
    clientSecret,
    scopes,
    source,
    metadataUrl,
    metadataXml,
    emailAttribute,
    nameAttribute,
    domains,
    autoProvision,
    defaultRoleId,
    enforceSSO,
    trustIdpMfa,
  ]);
  const fe = errors.fields;

  const preset = presets.data?.find((p) => p.id === presetId);
  const anySaml = presets.data?.find((p) => p.saml)?.saml;
  const choosePreset = (id: string | null) => {
    const p = presets.data?.find((x) => x.id === id);
    setPresetId(id);
    if (!p) return;
    if (!name.trim() || presets.data?.some((x) => x.name === name)) setName(p.name);
    setIssuer(p.issuerTemplate);
    setScopes(p.scopes);
    if (p.saml) {
      setMetadataUrl(p.saml.metadataUrlTemplate ?? '');
      setSource(p.saml.metadataUrlTemplate ? 'url' : 'xml');
      setEmailAttribute(p.saml.emailAttribute);
      setNameAttribute(p.saml.nameAttribute);
    } else if (kind === 'saml') setKind('oidc');
  };

  const badDomains = domains.filter((d) => !DOMAIN.test(d));
  const problem =
    (kind === 'oidc' &&
      PLACEHOLDER.test(issuer) &&
      `Replace ${PLACEHOLDER.exec(issuer)![0]} in the issuer with your own value.`) ||
    (kind === 'saml' &&
      source === 'url' &&
      PLACEHOLDER.test(metadataUrl) &&
      `Replace ${PLACEHOLDER.exec(metadataUrl)![0]} in the metadata URL with your own value.`) ||
    (badDomains.length > 0 && `Not a domain: ${badDomains.join(', ')}.`) ||
    (autoProvision && !defaultRoleId && 'Choose the role new users get.') ||
    null;

  const save = useMutation({
    mutationFn: async () => {
      const common = {
        name: name.trim(),
        allowedDomains: domains.join(','),
        autoProvision,
        defaultRoleId,
        enforceSSO,
        trustIdpMfa,
      };
      const attributes = { emailAttribute: emailAttribute.trim() || null, nameAttribute: nameAttribute.trim() || null };
      const metadata = source === 'url' ? { metadataUrl: metadataUrl.trim() } : { metadataXml };
      // An edit sends the metadata only when it changed (the XML is never shown back).
      const changedMetadata =
        source === 'url'
          ? metadata.metadataUrl && metadata.metadataUrl !== provider?.metadataUrl
            ? metadata
            : {}
          : metadataXml.trim()
            ? metadata
            : {};
      const saml = { ...attributes, ...changedMetadata };
      const oidc = {
        issuer: issuer.trim(),
        clientId: clientId.trim(),
        scopes: scopes.trim(),
        ...(clientSecret ? { clientSecret } : {}),
      };
      if (provider) {
        return call(
          api.PATCH('/api/v1/sso/providers/{id}', {
            params: { path: { id: provider.id } },
            body: { ...common, ...(provider.type === 'saml' ? saml : oidc) },
          }),
        );
      }
      const owner = { ...(orgId ? { orgId } : {}), ...(presetId ? { preset: presetId as PresetId } : {}) };
      if (kind === 'saml')
        return call(
          api.POST('/api/v1/sso/providers', {
            body: { type: 'saml', ...owner, ...common, ...attributes, ...metadata },
          }),
        );
      return call(api.POST('/api/v1/sso/providers', { body: { type: 'oidc', ...owner, ...common, ...oidc } }));
    },
    onSuccess: (p) => {
      notifications.show({
        color: 'green',
        message: editing ? `“${p.name}” saved.` : `“${p.name}” created. It starts inactive: test it, then turn it on.`,
      });
      if (untested(p))
        notifications.show({ color: 'yellow', title: 'Not tested yet', message: UNTESTED_TEXT, autoClose: false });
      void qc.invalidateQueries({ queryKey: ['sso-providers'] });
      onClose();
    },
    onError: errors.show,
  });

  const idpName = preset?.name ?? 'your identity provider';
  const register =
    kind === 'oidc'
      ? [{ label: 'Redirect URI', value: presets.data?.[0]?.redirectUri ?? '', testId: 'redirect-uri' }]
      : provider?.acsUrl
        ? [
            { label: 'ACS URL', value: provider.acsUrl },
            { label: 'Entity ID (audience)', value: provider.entityId ?? '' },
          ]
        : [
            { label: 'ACS URL', value: (preset?.saml ?? anySaml)?.acsUrl ?? '' },
            {
              label: 'Entity ID (audience)',
              value:
                (preset?.saml ?? anySaml)?.entityIdTemplate.replace(
                  '{providerId}',
                  '<the provider id, shown once created>',
                ) ?? '',
            },
          ];

  return (
    <Modal opened onClose={onClose} title={provider ? `Edit ${provider.name}` : 'New SSO provider'} size="lg">
      {presets.isError ? (
        <Alert color="red" role="alert">
          {explain(presets.error)}
        </Alert>
      ) : presets.isPending ? (
        <Text aria-busy="true">Loading presets…</Text>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (!problem) save.mutate();
          }}
        >
          <Stack>
            <FormError text={errors.form} />
            {!editing && (
              <Select
                label="Identity provider"
                description="A preset fills in the issuer pattern, scopes and attribute names."
                placeholder="Choose a preset"
                data={presets.data.map((p) => ({ value: p.id, label: p.name }))}
                value={presetId}
                onChange={choosePreset}
                data-autofocus
              />
            )}
            {!editing && (
              <Radio.Group label="Protocol" value={kind} onChange={(v) => setKind(v as Kind)}>
                <Group mt={4}>
                  <Radio value="oidc" label="OpenID Connect" />
                  <Radio value="saml" label="SAML 2.0" disabled={!!preset && !preset.saml} />
                </Group>
              </Radio.Group>
            )}
            <RegisterAt
              idp={idpName}
              values={register}
              notes={kind === 'saml' ? (preset?.saml?.notes ?? undefined) : preset?.notes}
            />
            <TextInput
              label="Name"
              description="Shown on the sign-in page (Continue with …)."
              required
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              maxLength={255}
              error={fe.name}
            />
            {kind === 'oidc' ? (
              <>
                <TextInput
                  label="Issuer"
                  description="Its /.well-known/openid-configuration is read from here."
                  required
                  type="url"
                  value={issuer}
                  onChange={(e) => setIssuer(e.currentTarget.value)}
                  error={fe.issuer}
                />
                <TextInput
                  label="Client ID"
                  required
                  value={clientId}
                  onChange={(e) => setClientId(e.currentTarget.value)}
                  error={fe.clientId}
                />
                <PasswordInput
                  label="Client secret"
                  description={
                    provider?.hasClientSecret
                      ? 'Stored encrypted and never shown. Leave empty to keep it.'
                      : 'Stored encrypted and never shown again.'
                  }
                  value={clientSecret}
                  onChange={(e) => setClientSecret(e.currentTarget.value)}
                  autoComplete="off"
                  error={fe.clientSecret}
                />
                <TextInput
                  label="Scopes"
                  description="Space-separated; must include openid."
                  value={scopes}
                  onChange={(e) => setScopes(e.currentTarget.value)}
                  error={fe.scopes}
                />
              </>
            ) : (
              <SamlFields
                values={{ source, metadataUrl, metadataXml, emailAttribute, nameAttribute }}
                set={(v) => {
                  if (v.source !== undefined) setSource(v.source);
                  if (v.metadataUrl !== undefined) setMetadataUrl(v.metadataUrl);
                  if (v.metadataXml !== undefined) setMetadataXml(v.metadataXml);
                  if (v.emailAttribute !== undefined) setEmailAttribute(v.emailAttribute);
                  if (v.nameAttribute !== undefined) setNameAttribute(v.nameAttribute);
                }}
                editing={editing}
                fe={fe}
              />
            )}
            <TagsInput
              label="Allowed domains"
              description="E-mail domains that sign in through this provider (Enter or comma after each). The sign-in page finds the provider from them."
              value={domains}
              onChange={(v) => setDomains(v.map((d) => d.trim().toLowerCase()).filter(Boolean))}
              splitChars={[',', ' ']}
              placeholder="example.com"
              clearable
              error={fe.allowedDomains}
            />
            <Checkbox
              label="Create accounts automatically"
              description="Someone the IdP vouches for who has no account here gets one, with the role below."
              checked={autoProvision}
              onChange={(e) => setAutoProvision(e.currentTarget.checked)}
            />
            <Select
              label="Role of new users"
              placeholder={roles.isPending ? 'Loading roles…' : 'Choose a role'}
              data={(roles.data ?? []).map((r) => ({ value: r.id, label: r.name }))}
              value={defaultRoleId}
              onChange={setDefaultRoleId}
              clearable
              disabled={!autoProvision}
              error={roles.isError ? explain(roles.error) : fe.defaultRoleId}
            />
            <Checkbox
              label="Enforce single sign-on"
              description="Password sign-in is turned off for everyone here; the partner’s administrators keep it (break-glass)."
              checked={enforceSSO}
              onChange={(e) => setEnforceSSO(e.currentTarget.checked)}
            />
            {enforceSSO && !provider?.lastTestedAt && (
              <Alert color="yellow" title="Not tested yet">
                <Warning />
              </Alert>
            )}
            <Checkbox
              label="Trust the IdP’s two-step verification"
              description="A second factor done at the IdP counts as MFA here."
              checked={trustIdpMfa}
              onChange={(e) => setTrustIdpMfa(e.currentTarget.checked)}
            />
            {problem && (
              <Text size="sm" c="red.8" role="status">
                {problem}
              </Text>
            )}
            <Group justify="end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={save.isPending} disabled={!!problem || !name.trim()}>
                {provider ? 'Save' : 'Create provider'}
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
