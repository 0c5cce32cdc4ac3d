// The SAML 2.0 part of the provider form: the IdP's metadata by URL or as XML, and the attribute names.
import { Button, FileButton, Group, Radio, Stack, Textarea, TextInput } from '@mantine/core';

export interface SamlValues {
  source: 'url' | 'xml';
  metadataUrl: string;
  metadataXml: string;
  emailAttribute: string;
  nameAttribute: string;
}

export function SamlFields({
  values: { source, metadataUrl, metadataXml, emailAttribute, nameAttribute },
  set,
  editing,
  fe,
}: {
  values: SamlValues;
  set: (v: Partial<SamlValues>) => void;
  editing: boolean;
  fe: Record<string, string>;
}) {
  const setSource = (v: 'url' | 'xml') => set({ source: v });
  const setMetadataUrl = (v: string) => set({ metadataUrl: v });
  const setMetadataXml = (v: string) => set({ metadataXml: v });
  const setEmailAttribute = (v: string) => set({ emailAttribute: v });
  const setNameAttribute = (v: string) => set({ nameAttribute: v });
  return (
    <>
      <Radio.Group label="IdP metadata" value={source} onChange={(v) => setSource(v as 'url' | 'xml')}>
        <Group mt={4}>
          <Radio value="url" label="From its URL" />
          <Radio value="xml" label="Paste or upload the XML" />
        </Group>
      </Radio.Group>
      {source === 'url' ? (
        <TextInput
          label="Metadata URL"
          description="Fetched now, and again by Test."
          required={!editing}
          type="url"
          value={metadataUrl}
          onChange={(e) => setMetadataUrl(e.currentTarget.value)}
          error={fe.metadataUrl}
        />
      ) : (
        <Stack gap={4}>
          <Textarea
            label="Metadata XML"
            description={
              editing ? 'Leave empty to keep the current metadata.' : 'The EntityDescriptor your IdP exports.'
            }
            required={!editing}
            value={metadataXml}
            onChange={(e) => setMetadataXml(e.currentTarget.value)}
            error={fe.metadataXml}
            autosize
            minRows={3}
            maxRows={8}
            ff="monospace"
          />
          <Group>
            <FileButton onChange={(f) => void f?.text().then(setMetadataXml)} accept=".xml,application/xml,text/xml">
              {(props) => (
                <Button {...props} size="xs" variant="default">
                  Upload metadata file
                </Button>
              )}
            </FileButton>
          </Group>
        </Stack>
      )}
      <TextInput
        label="E-mail attribute"
        description="Leave empty for the usual names, else an e-mail NameID."
        value={emailAttribute}
        onChange={(e) => setEmailAttribute(e.currentTarget.value)}
        error={fe.emailAttribute}
      />
      <TextInput
        label="Name attribute"
        value={nameAttribute}
        onChange={(e) => setNameAttribute(e.currentTarget.value)}
        error={fe.nameAttribute}
      />
    </>
  );
}
